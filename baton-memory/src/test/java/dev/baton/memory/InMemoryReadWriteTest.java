package dev.baton.memory;

import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on the in-memory server. */
class InMemoryReadWriteTest extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new InMemoryFixture();
    }
}
