package dev.baton.shedlock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's suite and Baton's additions on the shared test server (scripts/start-servers.sh). */
class PostgresShedLockIT extends ShedLockSuite {
    private static Backend backend;

    @BeforeAll
    static void start() {
        backend = Backend.postgres();
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.close();
        }
    }

    @Override
    protected boolean fuzzByDefault() {
        return true;
    }

    @Override
    protected Backend backend() {
        return backend;
    }
}
