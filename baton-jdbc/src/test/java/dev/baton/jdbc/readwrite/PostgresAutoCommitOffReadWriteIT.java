package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.fixtures.PostgresAutoCommitOffFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on PostgreSQL's lease strategy, through pools with {@code autoCommit=false}. */
class PostgresAutoCommitOffReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new PostgresAutoCommitOffFixture();
    }
}
