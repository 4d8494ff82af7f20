package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.MySqlDialectOnMariaDbFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder for the lease strategy on MySqlDialectOnMariaDb. */
class MySqlDialectOnMariaDbLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new MySqlDialectOnMariaDbFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return MySqlDialectOnMariaDbFixture.class;
    }
}
