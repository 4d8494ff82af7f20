package dev.baton.shedlock;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.memory.InMemoryLockServer;
import dev.baton.memory.InMemoryLocks;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** What the provider does when the lease ends under the task, and on close; in memory, two clients. */
class BatonLockProviderTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final LockClient client = InMemoryLocks.builder(server).leaseTime(Duration.ofMillis(300)).build();
    private final LockClient other = InMemoryLocks.builder(server).build();
    private final BatonLockProvider provider = new BatonLockProvider(client);

    @AfterEach
    void close() {
        provider.close();
        client.close();
        other.close();
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    private boolean otherGets(String name) {
        Optional<Lease> lease = other.lock(name).tryAcquire();
        lease.ifPresent(Lease::close);
        return lease.isPresent();
    }

    @Test
    void aLostLeaseEndsTheLockAndTheTaskIsToldWhenItChecks() {
        SimpleLock lock = provider.lock(config("lost", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        long token = BatonShedLock.currentToken();
        server.expire("lost"); // the server drops the grant: the next renewal finds it gone
        await().atMost(Duration.ofSeconds(3)).until(() -> provider.lock(config("lost", Duration.ofMinutes(1),
                Duration.ZERO)).map(again -> {
                    again.unlock();
                    return true;
                }).orElse(false));
        assertThat(BatonShedLock.currentToken()).isEqualTo(token);
        assertThatThrownBy(BatonShedLock::checkValid).isInstanceOf(LockLostException.class);
        lock.unlock(); // nothing left to release: no error
        assertThat(BatonShedLock.isLocked()).isFalse();
    }

    @Test
    void lockAtMostForReleasesALockStillHeld() {
        SimpleLock lock = provider.lock(config("capped", Duration.ofMillis(200), Duration.ZERO)).orElseThrow();
        await().atMost(Duration.ofSeconds(3)).until(() -> otherGets("capped"));
        assertThatThrownBy(BatonShedLock::checkValid).isInstanceOf(LockLostException.class)
                .hasMessageContaining("lockAtMostFor");
        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
    }

    @Test
    void aLockWhoseLockAtMostForPassedIsFreeEvenBeforeTheTimerThreadRuns() throws Exception {
        java.util.concurrent.CountDownLatch timerFree = new java.util.concurrent.CountDownLatch(1);
        provider.timer().execute(() -> { // the timer thread is busy (as under load): its release cannot run yet
            try {
                timerFree.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            provider.lock(config("due", Duration.ofMillis(20), Duration.ZERO)).orElseThrow();
            Thread.sleep(60); // lockAtMostFor has passed by the monotonic clock; nothing else is awaited
            assertThat(provider.lock(config("due", Duration.ofSeconds(5), Duration.ZERO)))
                    .as("the same provider locks it again once lockAtMostFor has passed").isPresent()
                    .get().satisfies(SimpleLock::unlock);
            SimpleLock kept = provider.lock(config("kept", Duration.ofSeconds(5), Duration.ofMillis(20))).orElseThrow();
            kept.unlock();
            Thread.sleep(60); // lockAtLeastFor has passed
            provider.releaseDue();
            assertThat(otherGets("kept")).as("another client gets it once lockAtLeastFor has passed").isTrue();
        } finally {
            timerFree.countDown();
        }
    }

    @Test
    void extendKeepsTheTokenAndUnlockThenRefusesAReuse() {
        SimpleLock lock = provider.lock(config("ext", Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        long token = BatonShedLock.currentToken();
        SimpleLock extended = lock.extend(Duration.ofSeconds(20), Duration.ZERO).orElseThrow();
        assertThat(BatonShedLock.currentToken()).isEqualTo(token);
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("ext");
        extended.unlock();
        assertThat(otherGets("ext")).isTrue();
        assertThatThrownBy(BatonShedLock::currentToken).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds no lock");
    }

    @Test
    void closeReleasesLocksKeptForLockAtLeastForAndRefusesNewOnes() {
        provider.lock(config("kept", Duration.ofMinutes(2), Duration.ofMinutes(1))).orElseThrow().unlock();
        assertThat(otherGets("kept")).isFalse();
        provider.close();
        assertThat(otherGets("kept")).isTrue();
        assertThatThrownBy(() -> provider.lock(config("kept", Duration.ofMinutes(1), Duration.ZERO)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void anotherProviderOnTheSameClientAndThreadIsExcluded() {
        try (BatonLockProvider second = new BatonLockProvider(client)) {
            SimpleLock lock = provider.lock(config("shared", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
            assertThat(second.lock(config("shared", Duration.ofMinutes(1), Duration.ZERO))).isEmpty();
            lock.unlock();
            assertThat(second.lock(config("shared", Duration.ofMinutes(1), Duration.ZERO))).isPresent();
        }
    }
}
