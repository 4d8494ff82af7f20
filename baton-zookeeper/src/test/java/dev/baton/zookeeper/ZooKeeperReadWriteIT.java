package dev.baton.zookeeper;

import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;

/** The read-write rung on ZooKeeper: read and write members in one line under the lock's parent. */
class ZooKeeperReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new ZooKeeperFixture();
    }
}
