package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.PostgresAutoCommitOffFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder for the lease strategy on PostgreSQL, through pools with {@code autoCommit=false}. */
class PostgresAutoCommitOffLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new PostgresAutoCommitOffFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return PostgresAutoCommitOffFixture.class;
    }
}
