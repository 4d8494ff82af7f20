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
     * SQLite's write lock has no queue: a writer that finds it taken retries after a pause ({@code SqliteWrites}: at
     * most 1 ms), so a newcomer's first write (the ticket that gives it its place in line) may miss a few gaps
     * while the others hand the lock round at a few milliseconds a turn (seen: 10–16 grants; with SQLite's own
     * busy handler, which sleeps up to 100 ms between tries, 23–51, and once 250 in CI). Five turns of the line of
     * 8 (35); the unfair hand-over passed waiters over 901 times.
     */
    @Override
    protected int mostPassedOver() {
        return 5 * 7;
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return SqliteFixture.class;
    }
}
