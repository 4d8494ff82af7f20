package dev.baton;

import java.time.Duration;

/**
 * What an operator's force release ({@code baton release}; {@code JdbcLockClient.forceRelease},
 * {@code RedisLockClient.forceRelease}, {@code ZooKeeperLockClient.forceRelease}) released: the grant that was live on the lock.
 *
 * @param name         the lock name
 * @param holder       the holder id of the released grant
 * @param fencingToken its fencing token
 * @param remaining    how much of its lease was left, by the server's clock, when it was read; null for a hold
 *                     that has no lease on the server (a ZooKeeper member node lives as long as its session)
 */
public record ForcedRelease(String name, String holder, long fencingToken, Duration remaining) {
}
