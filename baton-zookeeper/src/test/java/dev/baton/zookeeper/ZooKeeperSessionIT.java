package dev.baton.zookeeper;

import dev.baton.testkit.LockFixture;
import dev.baton.testkit.SessionContract;

import java.time.Duration;

/**
 * The contract ladder on ZooKeeper, climbed to its session rung. The lease rung ({@code LeaseContract}) does not
 * apply: a hold is a node that lives exactly as long as the client's ZooKeeper session; the server has no lease
 * to expire or extend, and nobody can take a node over after an expiry while its session lives. Its counterpart is
 * here: ending the session on the server loses every lease on it once and frees the locks at once.
 *
 * <p>One bound differs from a database session's: the server does not end a session when its connection drops, only
 * when the session timeout passes without hearing from it. A holder killed with {@code kill -9} therefore keeps its
 * locks for up to the session timeout (the fixture's = the lease time) plus one tick ({@code tickTime} 1 s: expiry
 * is checked in tick-sized buckets) after its last contact; {@link #deadHolderBound} says so, plus the slack.
 */
class ZooKeeperSessionIT extends SessionContract {
    @Override
    protected LockFixture createFixture() {
        return new ZooKeeperFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return ZooKeeperFixture.class;
    }

    @Override
    protected Duration deadHolderBound(Duration leaseTime) {
        return leaseTime.plus(Duration.ofSeconds(1)).plus(RECOVERY_SLACK);
    }
}
