package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.fixtures.MySqlDialectOnMariaDbFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on the {@link MySqlDialectOnMariaDbFixture}'s strategy and server. */
class MySqlDialectOnMariaDbReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new MySqlDialectOnMariaDbFixture();
    }
}
