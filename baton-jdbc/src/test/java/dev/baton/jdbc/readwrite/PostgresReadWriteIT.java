package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on the {@link PostgresFixture}'s strategy and server. */
class PostgresReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new PostgresFixture();
    }
}
