package dev.baton.redis;

import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on Redis. */
class RedisReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new RedisFixture();
    }
}
