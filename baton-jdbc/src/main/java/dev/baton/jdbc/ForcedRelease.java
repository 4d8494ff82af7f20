package dev.baton.jdbc;

import java.time.Duration;

/**
 * What {@link JdbcLockClient#forceRelease} released: the grant that was live on the lock's row.
 *
 * @param name         the lock name
 * @param holder       the holder id of the released grant
 * @param fencingToken its fencing token
 * @param remaining    how much of its lease was left, by the database clock, when it was read
 */
public record ForcedRelease(String name, String holder, long fencingToken, Duration remaining) {
}
