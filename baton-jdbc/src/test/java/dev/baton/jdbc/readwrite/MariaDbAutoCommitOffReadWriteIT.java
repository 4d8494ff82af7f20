package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.fixtures.MariaDbAutoCommitOffFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on MariaDB's lease strategy, through pools with {@code autoCommit=false}. */
class MariaDbAutoCommitOffReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new MariaDbAutoCommitOffFixture();
    }
}
