package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.LockClients;
import dev.baton.spi.ReleaseListener;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The core's own logic (batching, loss, reentrancy bookkeeping) over a small in-process backend that
 * records what the core asks of it. Backends themselves are tested against real servers by the contract
 * suite; this only checks what the core does with the SPI.
 */
class CoreLockClientTest {

    /** Grants any free name; records renewal batches; can be told to fail or to forget grants. */
    static final class RecordingBackend implements NotifiesReleases {
        final Map<String, LeaseKey> held = new ConcurrentHashMap<>();
        final List<Integer> renewBatchSizes = new CopyOnWriteArrayList<>();
        final AtomicLong tokens = new AtomicLong();
        final AtomicBoolean failing = new AtomicBoolean();
        /** Refuse calls on an interrupted thread, as a pool's borrow does (HikariCP: "Interrupted during connection acquisition"). */
        final AtomicBoolean refuseInterrupted = new AtomicBoolean();
        /** Busy replies carry this as the holder's remaining lease, when set. */
        volatile Duration busyRemaining;

        @Override
        public String description() {
            return "recording";
        }

        volatile ReleaseListener listener;

        @Override
        public void listen(ReleaseListener listener) {
            this.listener = listener;
        }

        @Override
        public void start(String clientId) {
        }

        @Override
        public synchronized AcquireResult tryAcquire(AcquireRequest request) {
            String name = request.name();
            String owner = request.owner();
            if (refuseInterrupted.get() && Thread.currentThread().isInterrupted()) {
                throw new LockBackendException("recording", "interrupted during connection acquisition", null);
            }
            LeaseKey k = held.get(name);
            if (k != null) {
                return new AcquireResult.Busy(k.owner(), k.token(), busyRemaining);
            }
            LeaseKey mine = new LeaseKey(name, owner, tokens.incrementAndGet());
            held.put(name, mine);
            return new AcquireResult.Granted(mine.token());
        }

        @Override
        public synchronized boolean release(LeaseKey lease) {
            if (refuseInterrupted.get() && Thread.currentThread().isInterrupted()) {
                throw new LockBackendException("recording", "interrupted during connection acquisition", null);
            }
            return held.remove(lease.name(), lease);
        }

        @Override
        public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
            if (failing.get()) {
                throw new LockBackendException("recording", "unreachable", null);
            }
            renewBatchSizes.add(leases.size());
            Set<LeaseKey> out = new HashSet<>();
            for (LeaseKey k : leases) {
                if (k.equals(held.get(k.name()))) {
                    out.add(k);
                }
            }
            return out;
        }

        @Override
        public List<LockInfo> inspect() {
            return List.of();
        }

        @Override
        public void close() {
        }
    }

    static final class Builder extends AbstractClientBuilder<Builder> {
        final RecordingBackend backend = new RecordingBackend();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    @Test
    void allHeldLeasesAreRenewedInOneBatchPerInterval() throws Exception {
        // a lease of 2 s renewed every 100 ms: a renewal would have to be late by almost 2 s for a lease to lapse
        Builder b = new Builder().leaseTime(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(100));
        try (LockClient client = b.build()) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                leases.add(client.lock("l" + i).acquire(Duration.ofSeconds(1)));
            }
            // the call under way now may have been put together before the last grant: the three after it count
            int taken = b.backend.renewBatchSizes.size();
            await("four renewal calls after all 50 grants").atMost(Duration.ofSeconds(10))
                    .until(() -> b.backend.renewBatchSizes.size() >= taken + 4);
            assertThat(List.copyOf(b.backend.renewBatchSizes).subList(taken + 1, taken + 4))
                    .as("each renewal call after all 50 were taken renewed all of them").containsOnly(50);
            assertThat(leases).allMatch(Lease::isValid);
        }
    }

    @Test
    void aGrantTheServerNoLongerShowsIsLostOnceAtTheNextRenewal() throws Exception {
        Builder b = new Builder().leaseTime(Duration.ofMillis(300));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("x").acquire(Duration.ofSeconds(1));
            AtomicInteger lost = new AtomicInteger();
            lease.onLost(e -> lost.incrementAndGet());
            b.backend.held.remove("x");
            await("lost").atMost(Duration.ofSeconds(10)).until(() -> lost.get() > 0);
            assertThat(lease.isValid()).isFalse();
            Thread.sleep(300); // three renewal intervals: a second report would come in them
            assertThat(lost).as("once").hasValue(1);
        }
    }

    /**
     * The client's clock is the test's, so "at its deadline, not before" is exact whatever the machine's speed: the
     * watchdog looks (twice) with the clock a nanosecond short of the deadline, then at it.
     */
    @Test
    void failingRenewalsLoseTheLeaseAtItsDeadlineNotBefore() throws Exception {
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        AtomicLong watchdogReads = new AtomicLong();
        Builder b = new Builder();
        b.leaseTime(Duration.ofMillis(600)).ticker(() -> {
            if (Thread.currentThread().getName().startsWith("baton-watchdog")) {
                watchdogReads.incrementAndGet();
            }
            return clock.get();
        });
        try (LockClient client = b.build()) {
            Lease lease = client.lock("x").acquire(Duration.ofSeconds(1));
            AtomicLong lostAt = new AtomicLong();
            lease.onLost(e -> lostAt.set(clock.get()));
            b.backend.failing.set(true);
            long deadline = ((LeaseHandle) lease).hold().deadlineNanos(); // a renewal at this clock would not move it
            clock.set(deadline - 1);
            long seen = watchdogReads.get();
            await("a whole watchdog pass at a nanosecond before the deadline").atMost(Duration.ofSeconds(10))
                    .until(() -> watchdogReads.get() >= seen + 2);
            assertThat(lease.isValid()).as("still within the deadline").isTrue();
            assertThat(lostAt).as("not lost before its deadline").hasValue(0);
            clock.set(deadline);
            await("lost at the deadline").atMost(Duration.ofSeconds(10)).until(() -> lostAt.get() != 0);
            assertThat(lostAt.get()).as("lost at the deadline's clock").isEqualTo(deadline);
            assertThat(lease.isValid()).isFalse();
        }
    }

    @Test
    void reentrantHoldsReleaseOnlyOnTheLast() {
        Builder b = new Builder();
        try (LockClient client = b.build()) {
            Lease outer = client.lock("r").acquire();
            Lease inner = client.lock("r").acquire();
            assertThat(inner.holdCount()).isEqualTo(2);
            inner.close();
            assertThat(b.backend.held).containsKey("r");
            outer.close();
            assertThat(b.backend.held).doesNotContainKey("r");
        }
    }

    @Test
    void builderSettingsAreCheckedAtOnce() {
        Builder b = new Builder();
        assertThatThrownBy(() -> b.leaseTime(null)).hasMessage("leaseTime must not be null");
        assertThatThrownBy(() -> b.leaseTime(Duration.ZERO)).hasMessageContaining("leaseTime must be positive");
        assertThatThrownBy(() -> b.leaseTime(Duration.ofMillis(50))).hasMessageContaining("at least 100 ms");
        assertThatThrownBy(() -> b.maxPollInterval(Duration.ofSeconds(-1))).hasMessageContaining("maxPollInterval");
        assertThatThrownBy(() -> b.clientIdPrefix(" ")).hasMessageContaining("clientIdPrefix");
        Builder conflicting = new Builder().leaseTime(Duration.ofSeconds(1)).renewInterval(Duration.ofSeconds(2));
        assertThatThrownBy(conflicting::build).hasMessageContaining("renewInterval (2000 ms) must be shorter than leaseTime (1000 ms)");
        Builder polls = new Builder().minPollInterval(Duration.ofSeconds(2)).maxPollInterval(Duration.ofSeconds(1));
        assertThatThrownBy(polls::build).hasMessageContaining("minPollInterval");
    }

    @Test
    void clientIdsNameHostPidAndARandomSuffix() {
        try (LockClient a = new Builder().clientIdPrefix("web-1").build(); LockClient b = new Builder().clientIdPrefix("web-1").build()) {
            assertThat(a.clientId()).startsWith("web-1/" + ProcessHandle.current().pid() + "/");
            assertThat(a.clientId()).isNotEqualTo(b.clientId());
            try (Lease l = a.lock("h").acquire()) {
                assertThat(l.holderId()).startsWith(a.clientId() + "#");
            }
        }
    }

    // ---- issue 8 item 9: a try-once does not look at the interrupt flag ----------------------------

    @Test
    void tryAcquireOnAnInterruptedThreadTakesAFreeLockAndKeepsTheFlag() {
        Builder b = new Builder();
        b.backend.refuseInterrupted.set(true); // a pool refuses to lend to an interrupted thread: the core must not let it see the flag
        try (LockClient client = b.build()) {
            Thread.currentThread().interrupt();
            try {
                try (Lease lease = client.lock("free-1").tryAcquire().orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                    assertThat(Thread.currentThread().isInterrupted()).as("flag kept after tryAcquire").isTrue();
                } // released on the interrupted thread
                assertThat(b.backend.held).as("released although interrupted").doesNotContainKey("free-1");
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after the release").isTrue();

                Lock view = client.lock("free-2").asLock();
                assertThat(view.tryLock()).as("Lock.tryLock() never throws").isTrue();
                view.unlock();
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after tryLock").isTrue();

                try (Lease lease = client.lock("free-3").acquire(Duration.ZERO)) {
                    assertThat(lease.isValid()).as("a zero wait tries once, as tryAcquire").isTrue();
                }
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after acquire(ZERO)").isTrue();

                b.backend.held.put("busy", new LeaseKey("busy", "someone-else#1", 99));
                assertThat(client.lock("busy").tryAcquire()).as("busy: empty, not an exception").isEmpty();
                assertThat(client.lock("busy").asLock().tryLock()).isFalse();
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after a busy try").isTrue();
            } finally {
                Thread.interrupted();
            }
        }
    }

    @Test
    void lockIsNotInterruptibleAndHidesTheFlagFromTheBackend() throws Exception {
        // a waiter parks on its backoff for at least half an hour, so the interrupt below lands while it is parked
        Builder b = new Builder().minPollInterval(Duration.ofHours(1)).maxPollInterval(Duration.ofHours(1));
        b.backend.refuseInterrupted.set(true);
        try (LockClient client = b.build()) {
            Lock free = client.lock("lock-free").asLock();
            Thread.currentThread().interrupt();
            try {
                free.lock();
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after lock()").isTrue();
                free.unlock();
            } finally {
                Thread.interrupted();
            }
            b.backend.held.put("lock-held", new LeaseKey("lock-held", "someone-else#1", 99));
            Lock held = client.lock("lock-held").asLock();
            CountDownLatch calling = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicReference<Object> outcome = new java.util.concurrent.atomic.AtomicReference<>();
            Thread t = new Thread(() -> {
                calling.countDown();
                try {
                    held.lock(); // interrupted while it waits: it keeps waiting
                    outcome.set(Thread.currentThread().isInterrupted());
                    held.unlock();
                } catch (Throwable e) {
                    outcome.set(e);
                }
            });
            t.start();
            calling.await();
            // parked after its first attempt found the lock busy
            await().atMost(Duration.ofSeconds(10)).until(() -> t.getState() == Thread.State.TIMED_WAITING);
            t.interrupt();
            b.backend.held.remove("lock-held");
            b.backend.listener.released("lock-held"); // as a backend that hears releases from its server
            t.join(10_000);
            assertThat(outcome.get()).as("lock() returned, with the interrupt flag set").isEqualTo(Boolean.TRUE);
        }
    }

    @Test
    void timedTryLockOnAnInterruptedThreadStillThrowsInterruptedExceptionAsTheJdkSays() {
        try (LockClient client = new Builder().build()) {
            Lock view = client.lock("timed").asLock();
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> view.tryLock(0, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).as("cleared, as InterruptedException promises").isFalse();
            assertThat(client.lock("timed").tryAcquire()).as("not taken").isPresent().get().satisfies(Lease::close);
        }
    }

    // ---- issue 8 item 11: durations that overflow -------------------------------------------------

    @Test
    void aLeaseTimeOfThreeMillionHoursIsRefusedNamingTheSettingTheValueAndTheBound() {
        Builder b = new Builder();
        assertThatThrownBy(() -> b.leaseTime(Duration.ofHours(3_000_000)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime").hasMessageContaining("PT3000000H")
                .hasMessageContaining("at most 7 days");
        assertThatThrownBy(() -> b.leaseTime(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> b.renewInterval(Duration.ofHours(3_000_000)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("renewInterval")
                .hasMessageContaining("at most 7 days");
        assertThatThrownBy(() -> b.minPollInterval(Duration.ofDays(365)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minPollInterval")
                .hasMessageContaining("at most 1 h");
        assertThatThrownBy(() -> b.maxPollInterval(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxPollInterval");
        assertThatThrownBy(() -> new ClientSettings(Duration.ofHours(3_000_000), Duration.ofSeconds(1),
                Duration.ofMillis(10), Duration.ofMillis(500), null, System::nanoTime))
                .as("settings built without the builder are bounded too")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        // the bound itself is a working client
        try (LockClient client = new Builder().leaseTime(AbstractClientBuilder.MAX_LEASE_TIME).build();
             Lease lease = client.lock("week").acquire(Duration.ofSeconds(1))) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void aHugeWaitMeansForeverWithoutOverflow() throws Exception {
        Builder b = new Builder().maxPollInterval(Duration.ofMillis(50));
        // a holder whose lease ends in three million days (a marker row, another version's client): no overflow
        b.backend.busyRemaining = Duration.ofDays(3_000_000);
        try (LockClient client = b.build()) {
            try (Lease lease = client.lock("free").acquire(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999))) {
                assertThat(lease.isValid()).isTrue();
            }
            b.backend.held.put("held", new LeaseKey("held", "someone-else#1", 99));
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                CountDownLatch attempting = new CountDownLatch(2);
                Future<Long> waited = pool.submit(() -> {
                    attempting.countDown();
                    try (Lease l = client.lock("held").acquire(Duration.ofSeconds(Long.MAX_VALUE))) {
                        return l.fencingToken();
                    }
                });
                Future<Boolean> viaView = pool.submit(() -> {
                    attempting.countDown();
                    Lock view = client.lock("held").asLock();
                    boolean got = view.tryLock(Long.MAX_VALUE, TimeUnit.DAYS);
                    if (got) {
                        view.unlock();
                    }
                    return got;
                });
                attempting.await();
                assertThat(waited.isDone()).as("still waiting").isFalse();
                b.backend.held.remove("held");
                assertThat(waited.get(10, TimeUnit.SECONDS)).isPositive();
                assertThat(viaView.get(10, TimeUnit.SECONDS)).isTrue();
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
