package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.LockObserver;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockClients;
import dev.baton.spi.ReportsTimeLeft;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A lease whose local deadline passed although none of its renewals failed (the process was paused: a long GC, a
 * stopped container) is only uncertain over a backend that confirms grants: it is renewed once more and lost only if
 * the server no longer shows it or cannot be asked. Found with {@code baton run --strategy session}: a paused
 * {@code baton} whose database session kept the lock throughout exited 76 ("lost") when it ran again.
 */
class OverdueLeaseTest {
    private static final Duration LEASE = Duration.ofSeconds(60);

    static class Backend extends LeaseConfirmationTest.ConfirmingBackend {
        final AtomicInteger renewals = new AtomicInteger();
        final AtomicBoolean renewalsFail = new AtomicBoolean();

        @Override
        public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
            renewals.incrementAndGet();
            if (renewalsFail.get()) {
                throw new LockBackendException("overdue-test", "unreachable", null);
            }
            return super.renew(leases, leaseTime);
        }
    }

    final class Builder extends AbstractClientBuilder<Builder> {
        final Backend backend;

        Builder() {
            this(new Backend());
        }

        Builder(Backend backend) {
            this.backend = backend;
        }

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    @Test
    void aLeasePastItsDeadlineThatTheServerStillShowsIsRenewedNotLost() throws Exception {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("paused").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            clock.addAndGet(LEASE.toNanos() + 1); // the process was paused for longer than the lease
            await("renewed by the watchdog's confirmer").atMost(Duration.ofSeconds(10))
                    .until(() -> b.backend.renewals.get() > 0 && lease.isValid());
            assertThat(lost).isEmpty();
            lease.checkValid();
            lease.close();
            assertThat(b.backend.held).as("released").isEmpty();
        }
    }

    @Test
    void aLeasePastItsDeadlineThatTheServerNoLongerShowsIsLostOnce() throws Exception {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("taken").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            b.backend.held.clear(); // expired on the server meanwhile
            clock.addAndGet(LEASE.toNanos() + 1);
            await("lost").atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
            assertThat(lost).singleElement().asString().contains("server no longer shows the grant");
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class);
            lease.close();
            assertThat(lost).hasSize(1);
        }
    }

    @Test
    void checkValidPastTheDeadlineAsksTheServerBeforeTheWatchdogDoes() {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("checked").acquire(Duration.ofSeconds(1));
            clock.addAndGet(LEASE.toNanos() + 1);
            lease.checkValid(); // renewed, in this thread if the watchdog has not yet
            assertThat(lease.isValid()).isTrue();
            b.backend.held.clear();
            clock.addAndGet(LEASE.toNanos() + 1);
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("no longer shows");
            lease.close();
        }
    }

    @Test
    void aLeaseWhoseRenewalFailedIsLostAtItsDeadlineWithoutAnotherTry() throws Exception {
        // the observer hears of a failed round after the renewer marked its leases' renewals failed: only then is the
        // lease one "whose renewal failed" (the backend's own call counter moves before the failure is recorded)
        CountDownLatch failureRecorded = new CountDownLatch(1);
        Backend backend = new Backend();
        LockObserver observer = new LockObserver() {
            @Override
            public void renewed(String backendName, int renewed, int failed, Duration took) {
                if (failed > 0 && backend.renewalsFail.get()) {
                    failureRecorded.countDown();
                }
            }
        };
        Builder b = new Builder(backend).leaseTime(LEASE).renewInterval(Duration.ofMillis(20)).observer(observer)
                .ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("unreachable").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            b.backend.renewalsFail.set(true);
            assertThat(failureRecorded.await(10, TimeUnit.SECONDS)).as("a failed renewal recorded").isTrue();
            clock.addAndGet(LEASE.toNanos() + 1);
            await("lost").atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
            assertThat(lost).singleElement().asString().contains("no successful renewal before its deadline")
                    .doesNotContain("renewing it then failed");
            lease.close();
        }
    }

    @Test
    void aLeasePastItsDeadlineWhoseRenewalFailsThenIsLost() throws Exception {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("cut").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            b.backend.renewalsFail.set(true); // the network died during the pause
            clock.addAndGet(LEASE.toNanos() + 1);
            await("lost").atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
            assertThat(lost).singleElement().asString().contains("renewing it then failed");
            lease.close();
        }
    }

    /**
     * After a pause every held lease is overdue at once: they are renewed together, not one round trip after
     * another on one thread while the watchdog's bound runs out for the tail (which the server still showed).
     * Each renewal call here takes 3 ms of the test's clock; one that passes the watchdog's 1 s bound first waits
     * until the watchdog has looked twice, so a one-by-one renewal loses the tail every time.
     */
    @Test
    void manyLeasesOverdueAtOnceAreRenewedTogetherAndNoneIsLost() throws Exception {
        int leases = 500;
        AtomicLong watchdogReads = new AtomicLong();
        AtomicLong jumpedAt = new AtomicLong(Long.MAX_VALUE);
        AtomicBoolean waited = new AtomicBoolean();
        Backend backend = new Backend() {
            @Override
            public Set<LeaseKey> renew(Collection<LeaseKey> keys, Duration leaseTime) {
                if (Thread.currentThread().getName().startsWith("baton-confirmer")) {
                    long at = clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(3)); // a round trip
                    if (at - jumpedAt.get() >= TimeUnit.SECONDS.toNanos(1) && waited.compareAndSet(false, true)) {
                        long seen = watchdogReads.get();
                        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                        while (watchdogReads.get() < seen + 2 && System.nanoTime() - until < 0) {
                            Thread.onSpinWait();
                        }
                    }
                }
                return super.renew(keys, leaseTime);
            }
        };
        Builder b = new Builder(backend).leaseTime(LEASE).ticker(() -> {
            if (Thread.currentThread().getName().startsWith("baton-watchdog")) {
                watchdogReads.incrementAndGet();
            }
            return clock.get();
        });
        try (LockClient client = b.build()) {
            List<Lease> held = new java.util.ArrayList<>();
            List<String> lost = new CopyOnWriteArrayList<>();
            for (int i = 0; i < leases; i++) {
                Lease lease = client.lock("overdue-batch-" + i).acquire(Duration.ofSeconds(1));
                lease.onLost(e -> lost.add(e.getMessage()));
                held.add(lease);
            }
            jumpedAt.set(clock.addAndGet(LEASE.toNanos() + 1)); // the process was paused for longer than the lease
            await("every lease renewed or lost").atMost(Duration.ofSeconds(10))
                    .until(() -> held.stream().allMatch(
                            l -> l.isValid() || ((LeaseHandle) l).hold().state() != Hold.State.HELD));
            assertThat(lost).as("leases the server still showed, called lost").isEmpty();
            held.forEach(Lease::close);
            assertThat(backend.held).as("released").isEmpty();
        }
    }

    /**
     * A regular renewal sent before the deadline and answered late extends the lease while its overdue renewal is
     * under way; that renewal then fails (a transient error): the lease is valid by the regular renewal, not lost.
     *
     * <p>The test's clock moves by a millisecond at each of the renewer's reads until the late renewal is sent (so it
     * is sent later than the grant or renewal whose deadline the test then passes), and from then on only when the
     * test moves it: the state the overdue renewal leaves (valid, not lost) then stays so, whenever it is looked at.
     * A clock still moving with the renewer's reads would run past the late renewal's deadline a few reads later,
     * before the next renewal is sent: another overdue lease, which the watchdog would find some time later.
     */
    @Test
    void anOverdueRenewalThatFailsAfterARegularRenewalExtendedTheLeaseDoesNotLoseIt() throws Exception {
        AtomicBoolean blockRenewer = new AtomicBoolean();
        AtomicBoolean renewerClockRuns = new AtomicBoolean(true);
        CountDownLatch renewerBlocked = new CountDownLatch(1);
        CountDownLatch releaseRenewer = new CountDownLatch(1);
        CountDownLatch regularRenewalDone = new CountDownLatch(1);
        Backend backend = new Backend() {
            @Override
            public Set<LeaseKey> renew(Collection<LeaseKey> keys, Duration leaseTime) {
                try {
                    if (Thread.currentThread().getName().startsWith("baton-renewer")
                            && blockRenewer.compareAndSet(true, false)) {
                        renewerClockRuns.set(false); // this renewal's send time is read: only the test moves the clock
                        renewerBlocked.countDown();
                        releaseRenewer.await(10, TimeUnit.SECONDS);
                    } else if (Thread.currentThread().getName().startsWith("baton-confirmer")) {
                        releaseRenewer.countDown();
                        regularRenewalDone.await(10, TimeUnit.SECONDS);
                        throw new LockBackendException("overdue-test", "transient", null);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.renew(keys, leaseTime);
            }
        };
        LockObserver observer = new LockObserver() {
            @Override
            public void renewed(String backendName, int renewed, int failed, Duration took) {
                if (renewed > 0 && releaseRenewer.getCount() == 0) {
                    regularRenewalDone.countDown();
                }
            }
        };
        // each clock read of the renewer takes a millisecond until the late renewal is sent: each renewal is sent
        // later than the one before
        Builder b = new Builder(backend).leaseTime(LEASE).renewInterval(Duration.ofMillis(20)).observer(observer)
                .ticker(() -> Thread.currentThread().getName().startsWith("baton-renewer") && renewerClockRuns.get()
                        ? clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1)) : clock.get());
        try (LockClient client = b.build()) {
            Lease lease = client.lock("late-regular").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            Hold h = ((LeaseHandle) lease).hold();
            blockRenewer.set(true);
            assertThat(renewerBlocked.await(10, TimeUnit.SECONDS)).as("a regular renewal under way").isTrue();
            clock.set(h.deadlineNanos() + 1); // past the deadline of the last renewal, before the pending one's
            assertThat(regularRenewalDone.await(10, TimeUnit.SECONDS)).as("the regular renewal answered").isTrue();
            // the overdue renewal was sent before the regular one answered (the backend's latches): it has failed or
            // is failing; done when the lease is no longer overdue (or no longer held)
            await("overdue renewal done").atMost(Duration.ofSeconds(10))
                    .until(() -> h.state() != Hold.State.HELD || !h.overdueLongerThan(0, clock.get()));
            assertThat(lost).isEmpty();
            assertThat(lease.isValid()).isTrue();
            lease.close();
        }
    }

    /**
     * Found in CI on MariaDB with 1,200 leases on a loaded machine: every lease was reported lost to a "clock jump"
     * that never happened. A regular renewal read the time left on the server, then ran late; meanwhile the lease's
     * deadline passed, and the renewal of the overdue lease extended it; when the regular renewal answered, its
     * (older, smaller) time left was compared with the deadline the later renewal had set. The check must compare
     * with the deadline the client counted on when the renewal was sent.
     */
    @Test
    void aLateRenewalsTimeLeftIsNotComparedWithTheDeadlineALaterRenewalSet() throws Exception {
        CountDownLatch mayRead = new CountDownLatch(1);
        CountDownLatch read = new CountDownLatch(1);
        CountDownLatch mayAnswer = new CountDownLatch(1);
        CountDownLatch answered = new CountDownLatch(1);
        Map<LeaseKey, Long> expiries = new ConcurrentHashMap<>();
        class TimeLeftBackend extends Backend implements ReportsTimeLeft {
            @Override
            public Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime) {
                await(mayRead);
                Map<LeaseKey, Duration> left = new HashMap<>();
                for (LeaseKey k : leases) {
                    left.put(k, Duration.ofNanos(expiries.get(k) - clock.get())); // read, as one SELECT would
                }
                read.countDown();
                await(mayAnswer); // ... and the renewal runs late
                Set<LeaseKey> renewed = renew(leases, leaseTime);
                left.keySet().retainAll(renewed);
                return left;
            }

            @Override
            public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
                Set<LeaseKey> renewed = super.renew(leases, leaseTime);
                renewed.forEach(k -> expiries.put(k, clock.get() + leaseTime.toNanos()));
                return renewed;
            }

            private void await(CountDownLatch latch) {
                try {
                    assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        TimeLeftBackend backend = new TimeLeftBackend();
        LockObserver observer = new LockObserver() {
            @Override
            public void renewed(String backendName, int renewed, int failed, Duration took) {
                if (Thread.currentThread().getName().startsWith("baton-renewer")) {
                    answered.countDown();
                }
            }
        };
        Builder b = new Builder(backend).leaseTime(LEASE).renewInterval(Duration.ofMillis(20)).observer(observer)
                .ticker(clock::get);
        try (LockClient client = b.build()) {
            long granted = clock.get();
            Lease lease = client.lock("late-answer").acquire(Duration.ofSeconds(1));
            expiries.put(backend.held.get("late-answer"), granted + LEASE.toNanos());
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            clock.addAndGet(LEASE.toNanos() / 2);
            mayRead.countDown();
            assertThat(read.await(10, TimeUnit.SECONDS)).as("the regular renewal read half a lease left").isTrue();
            clock.addAndGet(LEASE.toNanos() / 2 + TimeUnit.MILLISECONDS.toNanos(1)); // past the deadline
            await("the overdue lease renewed by the watchdog's confirmer").atMost(Duration.ofSeconds(10))
                    .until(lease::isValid);
            mayAnswer.countDown();
            assertThat(answered.await(10, TimeUnit.SECONDS)).as("the late renewal answered").isTrue();
            assertThat(lost).isEmpty();
            assertThat(lease.isValid()).isTrue();
            lease.close();
        }
    }
}
