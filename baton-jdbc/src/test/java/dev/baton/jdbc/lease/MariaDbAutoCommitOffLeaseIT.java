package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.MariaDbAutoCommitOffFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder for the lease strategy on MariaDB, through pools with {@code autoCommit=false}. */
class MariaDbAutoCommitOffLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new MariaDbAutoCommitOffFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return MariaDbAutoCommitOffFixture.class;
    }
}
