package dev.baton.shedlock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.concurrent.ExecutionException;

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

    /** ShedLock's fuzz test, in the default build on this backend only; {@link ShedLockFuzzIT} runs it on all. */
    @Override
    @Test
    public void fuzzTestShouldPass() throws ExecutionException, InterruptedException {
        super.fuzzTestShouldPass();
    }

    @Override
    protected Backend backend() {
        return backend;
    }
}
