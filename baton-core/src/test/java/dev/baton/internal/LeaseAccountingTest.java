package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.LockObserver;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockClients;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A release racing the loss of the same lease (the watchdog, a renewal or {@code close()} calling it lost): the
 * lease ends exactly once, as lost or as released, never both — else an observer's count of held leases (Micrometer's
 * {@code baton.leases.held}) is lowered twice and a lost lease's failed release throws "no longer renewed".
 */
class LeaseAccountingTest {
    private static final int ROUNDS = 3000;

    /** Grants any free name; every release fails, as on an unreachable server. */
    static final class UnreachableOnRelease extends CapabilitiesTest.Base {
        @Override
        public synchronized boolean release(LeaseKey lease) {
            held.remove(lease.name(), lease);
            throw new LockBackendException("accounting-test", "unreachable", null);
        }
    }

    final class Builder extends AbstractClientBuilder<Builder> {
        final UnreachableOnRelease backend = new UnreachableOnRelease();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    @Test
    void aReleaseRacingTheLossEndsTheLeaseOnceAndNeverAsBoth() throws Exception {
        AtomicInteger held = new AtomicInteger(); // as BatonMetrics counts baton.leases.held
        LockObserver counting = new LockObserver() {
            @Override
            public void leaseGranted(String backend, String lockName, long fencingToken) {
                held.incrementAndGet();
            }

            @Override
            public void leaseReleased(String backend, String lockName, Duration heldFor, boolean wasLost) {
                if (!wasLost) {
                    held.decrementAndGet();
                }
            }

            @Override
            public void leaseLost(String backend, String lockName, LossCause cause, LockLostException reason) {
                held.decrementAndGet();
            }
        };
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60)).observer(counting);
        CyclicBarrier start = new CyclicBarrier(2);
        AtomicReference<Hold> current = new AtomicReference<>();
        AtomicBoolean markedLost = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        Thread loser = new Thread(() -> {
            try {
                while (true) {
                    start.await(10, TimeUnit.SECONDS);
                    if (stop.get()) {
                        return;
                    }
                    markedLost.set(current.get().markLost("lost by the test", LockObserver.LossCause.DEADLINE,
                            null));
                    start.await(10, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "test-loser");
        loser.start();
        int both = 0;
        int neither = 0;
        try (LockClient client = b.build()) {
            for (int i = 0; i < ROUNDS; i++) {
                Lease lease = client.lock("accounting-" + i).acquire(Duration.ofSeconds(1));
                current.set(((LeaseHandle) lease).hold());
                start.await(10, TimeUnit.SECONDS);
                boolean threw = false;
                try {
                    lease.close();
                } catch (LockBackendException e) {
                    threw = true; // "failed; it is no longer renewed": only for a lease that was still held
                }
                start.await(10, TimeUnit.SECONDS); // the loser's markLost has returned
                if (threw && markedLost.get()) {
                    both++;
                } else if (!threw && !markedLost.get()) {
                    neither++;
                }
            }
            stop.set(true);
            start.await(10, TimeUnit.SECONDS);
        }
        loser.join(10_000);
        assertThat(both).as("rounds where the lease was lost and its release still failed as of a held lease")
                .isZero();
        assertThat(neither).as("rounds where it was neither lost nor released as held").isZero();
        assertThat(held).as("leases held by the observer's count").hasValue(0);
    }

    @Test
    void theLastDropOfALostLeaseSaysItLeftLostInTheSameStep() {
        Hold h = new Hold(new LeaseKey("accounting-unit", "me", 1), 1, 0, 100, "accounting-test", null);
        assertThat(h.tryAddHold()).isTrue();
        assertThat(h.dropHold()).as("a hold remains").isNull();
        h.markLost("lost by the test", LockObserver.LossCause.DEADLINE, null);
        assertThat(h.dropHold()).isEqualTo(Hold.State.LOST);
        assertThat(h.state()).isEqualTo(Hold.State.RELEASED);
        assertThat(h.markLost("again", LockObserver.LossCause.DEADLINE, null)).isFalse();
    }
}
