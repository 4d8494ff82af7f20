package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.MariaDbFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder for the lease strategy on MariaDb. */
class MariaDbLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new MariaDbFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return MariaDbFixture.class;
    }
}
