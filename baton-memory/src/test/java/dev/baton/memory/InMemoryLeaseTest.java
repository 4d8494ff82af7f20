package dev.baton.memory;

import dev.baton.testkit.LeaseContract;
import dev.baton.testkit.LockFixture;

/**
 * The whole contract ladder of a lease strategy on the in-memory server, run by {@code mvn test}: exclusion,
 * fencing, liveness (its dead holder crashed in process, see {@link InMemoryFixture}) and leases.
 */
class InMemoryLeaseTest extends LeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new InMemoryFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return InMemoryFixture.class;
    }
}
