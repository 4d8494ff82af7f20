package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.SqliteFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder for the lease strategy on Sqlite. */
class SqliteLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new SqliteFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return SqliteFixture.class;
    }
}
