package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.LockObserver;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LockClients;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An observer that throws an {@link Error} (an {@link AssertionError}, a {@link NoClassDefFoundError} of a missing
 * metrics library) changes nothing: the caller still gets its lease, and the watchdog keeps watching.
 */
class ThrowingObserverTest {
    private static final Duration LEASE = Duration.ofSeconds(60);

    final class Builder extends AbstractClientBuilder<Builder> {
        final CapabilitiesTest.Base backend = new CapabilitiesTest.Base();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    @Test
    void anObserverThrowingAnErrorOnGrantDoesNotCostTheCallerItsLease() {
        LockObserver throwing = new LockObserver() {
            @Override
            public void leaseGranted(String backend, String lockName, long fencingToken) {
                throw new AssertionError("observer bug");
            }
        };
        Builder b = new Builder().leaseTime(LEASE).observer(throwing);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("granted-error").acquire(Duration.ofSeconds(1));
            assertThat(lease.isValid()).isTrue();
            lease.close();
            assertThat(b.backend.held).as("released").isEmpty();
        }
    }

    @Test
    void anObserverThrowingAnErrorOnLossDoesNotStopTheWatchdog() throws Exception {
        AtomicInteger lossesSeen = new AtomicInteger();
        LockObserver throwing = new LockObserver() {
            @Override
            public void leaseLost(String backend, String lockName, LossCause cause, LockLostException reason) {
                lossesSeen.incrementAndGet();
                throw new AssertionError("observer bug");
            }
        };
        Builder b = new Builder().leaseTime(LEASE).observer(throwing).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease first = client.lock("lost-error-1").acquire(Duration.ofSeconds(1));
            CountDownLatch firstLost = new CountDownLatch(1);
            first.onLost(e -> firstLost.countDown());
            clock.addAndGet(LEASE.toNanos() + 1);
            assertThat(firstLost.await(10, TimeUnit.SECONDS)).as("first lease lost, its listener run").isTrue();

            Lease second = client.lock("lost-error-2").acquire(Duration.ofSeconds(1));
            CountDownLatch secondLost = new CountDownLatch(1);
            second.onLost(e -> secondLost.countDown());
            clock.addAndGet(LEASE.toNanos() + 1);
            assertThat(secondLost.await(10, TimeUnit.SECONDS)).as("the watchdog still runs").isTrue();
            assertThat(lossesSeen).hasValue(2);
            first.close();
            second.close();
        }
    }
}
