package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.fixtures.MariaDbFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on the {@link MariaDbFixture}'s strategy and server. */
class MariaDbReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new MariaDbFixture();
    }
}
