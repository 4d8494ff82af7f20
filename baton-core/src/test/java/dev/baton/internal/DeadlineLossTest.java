package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.LockObserver;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockClients;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease whose deadline passed is lost, and its listeners run once, whoever notices first: the watchdog, the
 * release, or a renewal whose answer comes back after the deadline. Found by {@code baton check} on Redis
 * (QuickProfileIT, session-kill, lease 1 s): a holder whose renewals failed for a whole lease released it a few ms
 * after its deadline, before the watchdog's next tick, so its {@code onLost} listeners never ran and the checker saw
 * it believe in a hold the server had already given to the next waiter.
 *
 * <p>Each test keeps the watchdog thread busy in the lost listener of a first lease (it runs listeners on its own
 * thread), so only the path under test can notice the second lease's deadline: no timing luck.
 */
class DeadlineLossTest {
    private static final long LEASE_NANOS = TimeUnit.SECONDS.toNanos(60);

    /**
     * A backend that shows every grant until told otherwise; its renewal can move the test's clock first. Renewals
     * wait until the watchdog is busy: one that read the clock just after the test moved it would otherwise give
     * the first lease a new deadline before the watchdog saw the old one pass.
     */
    final class Backend extends CapabilitiesTest.Base {
        volatile java.util.function.Consumer<Collection<LeaseKey>> beforeRenewal = leases -> { };
        volatile boolean showsGrants = true;

        @Override
        public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
            try {
                watchdogBusy.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Set.of();
            }
            beforeRenewal.accept(leases);
            return showsGrants ? super.renew(leases, leaseTime) : Set.of();
        }
    }

    final class Builder extends AbstractClientBuilder<Builder> {
        final Backend backend = new Backend();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final CountDownLatch watchdogBusy = new CountDownLatch(1);
    private final CountDownLatch freeWatchdog = new CountDownLatch(1);

    /** Loses a first lease to its deadline and keeps the watchdog thread inside that lease's listener. */
    private Lease occupyTheWatchdog(LockClient client) throws InterruptedException {
        Lease first = client.lock("first").acquire(Duration.ofSeconds(1));
        first.onLost(e -> {
            watchdogBusy.countDown();
            try {
                freeWatchdog.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        });
        clock.addAndGet(LEASE_NANOS + 1);
        assertThat(watchdogBusy.await(30, TimeUnit.SECONDS)).as("the watchdog noticed the first lease").isTrue();
        return first;
    }

    @Test
    void aLeaseReleasedAfterItsDeadlineBeforeTheWatchdogLookedIsReportedLostOnce() throws Exception {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60)).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease first = occupyTheWatchdog(client);
            Lease second = client.lock("second").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            second.onLost(e -> lost.add(e.getMessage()));
            clock.addAndGet(LEASE_NANOS + 1); // its renewals failed for a whole lease
            assertThat(second.isValid()).isFalse();
            second.close();
            assertThat(lost).as("listeners of a lease released past its deadline").hasSize(1);
            assertThat(lost.get(0)).contains("no successful renewal before its deadline");
            freeWatchdog.countDown();
            first.close();
            assertThat(lost).hasSize(1);
        }
    }

    @Test
    void aRenewalAnsweredAfterTheDeadlineReportsTheDeadlineAndThatTheServerNoLongerShowsIt() throws Exception {
        List<LockObserver.LossCause> causes = new CopyOnWriteArrayList<>();
        LockObserver observer = new LockObserver() {
            @Override
            public void leaseLost(String backend, String lockName, LossCause cause, LockLostException reason) {
                if (lockName.equals("second")) {
                    causes.add(cause);
                }
            }
        };
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60)).renewInterval(Duration.ofMillis(20))
                .ticker(clock::get).observer(observer);
        try (LockClient client = b.build()) {
            Lease first = occupyTheWatchdog(client);
            Lease second = client.lock("second").acquire(Duration.ofSeconds(1));
            CountDownLatch noticed = new CountDownLatch(1);
            List<String> lost = new CopyOnWriteArrayList<>();
            second.onLost(e -> {
                lost.add(e.getMessage());
                noticed.countDown();
            });
            // sent while valid; by the time the answer came the deadline had passed and the server had let it go
            // (only a renewal that carries it: one of the first lease alone may still be waiting for the watchdog)
            b.backend.beforeRenewal = leases -> {
                if (leases.stream().anyMatch(k -> k.name().equals("second"))) {
                    b.backend.showsGrants = false;
                    clock.addAndGet(LEASE_NANOS + 1);
                    b.backend.beforeRenewal = l -> { };
                }
            };
            assertThat(noticed.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(lost).hasSize(1);
            assertThat(lost.get(0)).contains("no successful renewal before its deadline")
                    .contains("server no longer has the grant");
            // the server answered that it no longer has it: that, not an unreachable server, is the cause
            assertThat(causes).containsExactly(LockObserver.LossCause.NOT_ON_SERVER);
            freeWatchdog.countDown();
            second.close();
            first.close();
        }
    }
}
