package dev.baton.jdbc;

import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on the {@link SqliteFixture}'s strategy and server. */
class SqliteReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new SqliteFixture();
    }
}
