package dev.baton.jdbc;

import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on the {@link PostgresSessionFixture}'s strategy and server. */
class PostgresSessionReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new PostgresSessionFixture();
    }
}
