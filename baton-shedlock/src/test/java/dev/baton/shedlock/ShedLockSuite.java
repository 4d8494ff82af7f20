package dev.baton.shedlock;

import dev.baton.Lease;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * ShedLock's own suite ({@code shedlock-test-support}) on a Baton backend, plus what Baton adds: fencing tokens seen
 * by the task, and lockAtLeastFor that outlives the client's lease time. The checks ask a second client, so "locked"
 * means another process is excluded.
 */
abstract class ShedLockSuite extends AbstractExtensibleLockProviderIntegrationTest {

    protected abstract Backend backend();

    /**
     * ShedLock's fuzz test (8 threads, 800 grants; 15 to 30 s per backend) is not part of this suite: overridden
     * without {@code @Test}, JUnit does not run it here. {@link PostgresShedLockIT} runs it in the default build;
     * {@link ShedLockFuzzIT}, which the build runs only when asked ({@code -Dbaton.shedlock.fuzz}), on every backend.
     */
    @Override
    public void fuzzTestShouldPass() throws ExecutionException, InterruptedException {
        super.fuzzTestShouldPass();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return backend().provider;
    }

    @Override
    protected void assertLocked(String lockName) {
        Optional<Lease> other = backend().observer.lock(lockName).tryAcquire();
        other.ifPresent(Lease::close);
        assertThat(other).as("another client must not get '%s'", lockName).isEmpty();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        // a release that is due runs on the provider's timer thread; do not race it (what is due is released now)
        backend().provider.releaseDue();
        Optional<Lease> other = backend().observer.lock(lockName).tryAcquire();
        other.ifPresent(Lease::close);
        assertThat(other).as("another client must get '%s'", lockName).isPresent();
    }

    @Test
    void theTaskSeesAFencingTokenThatGrowsWithEveryGrant() {
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(getLockProvider());
        LockConfiguration config = new LockConfiguration(Instant.now(), LOCK_NAME1, Duration.ofSeconds(30), Duration.ZERO);
        AtomicLong first = new AtomicLong();
        AtomicLong second = new AtomicLong();
        executor.executeWithLock((Runnable) () -> first.set(BatonShedLock.currentToken()), config);
        long between;
        try (Lease other = backend().observer.lock(LOCK_NAME1).tryAcquire().orElseThrow()) {
            between = other.fencingToken();
        }
        executor.executeWithLock((Runnable) () -> {
            BatonShedLock.checkValid();
            second.set(BatonShedLock.currentToken());
        }, config);
        assertThat(between).isGreaterThan(first.get());
        assertThat(second.get()).isGreaterThan(between);
    }

    @Test
    void lockAtLeastForOutlivesTheLeaseTimeAndThenEnds() throws InterruptedException {
        Duration atLeast = Backend.LEASE.multipliedBy(2);
        // lockAtLeastFor counts from the lock request, not from when lock() returned: measure from before it
        long requestedAt = System.nanoTime();
        SimpleLock lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(30), atLeast)).orElseThrow();
        lock.unlock();
        // past a whole lease time after the unlock: still held (renewed), by this provider and for everyone else
        Thread.sleep(Backend.LEASE.plusMillis(300).toMillis());
        assertThat(getLockProvider().lock(lockConfig(LOCK_NAME1))).isEmpty();
        assertLocked(LOCK_NAME1);
        await().atMost(atLeast.plusSeconds(3)).pollInterval(Duration.ofMillis(50))
                .until(() -> backend().observer.lock(LOCK_NAME1).tryAcquire().map(l -> {
                    l.close();
                    return true;
                }).orElse(false));
        assertThat(Duration.ofNanos(System.nanoTime() - requestedAt)).isGreaterThanOrEqualTo(atLeast);
    }
}
