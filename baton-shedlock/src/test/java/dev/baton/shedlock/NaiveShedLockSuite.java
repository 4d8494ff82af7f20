package dev.baton.shedlock;

import dev.baton.Lease;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Not run by itself (no Test/IT suffix): ShedLock's suite on the naive provider one would write first, a Baton
 * {@code tryAcquire} per lock and {@code close} per unlock. {@link PositiveControlTest} runs it and expects failures:
 * Baton locks are re-entrant per thread and released at once, ShedLock locks are neither.
 */
class NaiveShedLockSuite extends ShedLockSuite {
    private static Backend backend;

    @BeforeAll
    static void start() {
        backend = Backend.inMemory();
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    @Override
    protected Backend backend() {
        return backend;
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return config -> backend.client.lock(config.getName()).tryAcquire().map(NaiveShedLockSuite::simpleLock);
    }

    private static SimpleLock simpleLock(Lease lease) {
        return lease::close;
    }
}
