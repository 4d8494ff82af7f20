package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder for the lease strategy on Postgres. */
class PostgresLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new PostgresFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return PostgresFixture.class;
    }
}
