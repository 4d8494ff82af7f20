package dev.baton.redis;

import dev.baton.testkit.LeaseContract;
import dev.baton.testkit.LockFixture;

/** The whole contract ladder on Redis: Exclusion, Fencing, Liveness, Lease. */
class RedisLeaseIT extends LeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new RedisFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return RedisFixture.class;
    }
}
