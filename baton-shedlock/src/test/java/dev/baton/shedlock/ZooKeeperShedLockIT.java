package dev.baton.shedlock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's suite and Baton's additions on the shared test server (scripts/start-servers.sh). */
class ZooKeeperShedLockIT extends ShedLockSuite {
    private static Backend backend;

    @BeforeAll
    static void start() {
        backend = Backend.zooKeeper();
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.close();
        }
    }

    @Override
    protected Backend backend() {
        return backend;
    }
}
