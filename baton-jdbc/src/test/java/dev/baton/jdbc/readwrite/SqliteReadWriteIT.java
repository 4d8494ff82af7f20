package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.fixtures.SqliteFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on the {@link SqliteFixture}'s strategy and server. */
class SqliteReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new SqliteFixture();
    }
}
