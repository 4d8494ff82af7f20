package dev.baton.jdbc;

import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder for the lease strategy on Sqlite. */
class SqliteLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new SqliteFixture();
    }

    /**
     * SQLite's write lock is taken through its busy handler, which sleeps between retries (1 ms growing to 100 ms)
     * instead of queueing: a newcomer's first write (the ticket that gives it its place in line) may sleep while
     * the others hand the lock round at 3–5 ms a turn, several times over (seen: 35, 45 and 66 grants). Once it has
     * its place, the line's order holds. 25 turns of the line of 8 (175) still fails the unfair hand-over (901).
     */
    @Override
    protected int mostPassedOver() {
        return 25 * 7;
    }

    /** For the same reason a newcomer's wait varies more: 20 × the median, the target of issue 13 for SQLite. */
    @Override
    protected int longestOverMedian() {
        return 20;
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return SqliteFixture.class;
    }
}
