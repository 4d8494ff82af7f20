package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.LockTimeoutException;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockBackend;
import dev.baton.spi.LockClients;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.WaitingQueue;
import org.junit.jupiter.api.Test;

import java.time.Duration;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the core does with each optional capability of the SPI: it detects it, uses it as documented, and does not
 * use what a backend does not declare. Backends are tested against their real servers by the contract ladder.
 */
class CapabilitiesTest {

    /** Grants free names; records the calls the core makes. */
    static class Base implements LockBackend {
        final Map<String, LeaseKey> held = new ConcurrentHashMap<>();
        final AtomicLong tokens = new AtomicLong();
        final List<String> calls = new CopyOnWriteArrayList<>();

        @Override
        public String description() {
            return "capabilities-test";
        }

        @Override
        public void start(String clientId) {
            calls.add("start " + clientId);
        }

        @Override
        public synchronized AcquireResult tryAcquire(AcquireRequest request) {
            calls.add("try " + request.name() + " " + request.patience());
            LeaseKey k = held.get(request.name());
            if (k != null) {
                return new AcquireResult.Busy(k.owner(), k.token(), null);
            }
            LeaseKey mine = new LeaseKey(request.name(), request.owner(), tokens.incrementAndGet());
            held.put(request.name(), mine);
            return new AcquireResult.Granted(mine.token());
        }

        @Override
        public synchronized boolean release(LeaseKey lease) {
            return held.remove(lease.name(), lease);
        }

        @Override
        public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
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
            calls.add("close");
        }
    }

    static final class Queueing extends Base implements WaitingQueue {
        final AtomicInteger withdrawals = new AtomicInteger();

        @Override
        public void withdraw(AcquireRequest request) {
            withdrawals.incrementAndGet();
            calls.add("withdraw " + request.name());
        }
    }

    /** A line whose busy answers tell the waiter it is first and should try again within 5 ms. */
    static final class HeadOfLine extends Base implements WaitingQueue {
        @Override
        public synchronized AcquireResult tryAcquire(AcquireRequest request) {
            AcquireResult result = super.tryAcquire(request);
            return result instanceof AcquireResult.Busy busy
                    ? new AcquireResult.Busy(busy.holder(), busy.token(), Duration.ofSeconds(10), Duration.ofMillis(5))
                    : result;
        }

        @Override
        public void withdraw(AcquireRequest request) {
            calls.add("withdraw " + request.name());
        }
    }

    static final class Notifying extends Base implements NotifiesReleases {
        volatile ReleaseListener listener;

        @Override
        public void listen(ReleaseListener listener) {
            this.listener = listener;
            calls.add("listen");
        }
    }

    static final class Blocking extends Base implements BlockingWait {
        final AtomicInteger slices = new AtomicInteger();
        volatile Function<AcquireRequest, Outcome> answer = r -> new Outcome.NotNow("test");

        @Override
        public Outcome awaitGrant(AcquireRequest request, Duration slice) {
            slices.incrementAndGet();
            return answer.apply(request);
        }
    }

    static final class Builder extends AbstractClientBuilder<Builder> {
        private final LockBackend backend;

        Builder(LockBackend backend) {
            this.backend = backend;
        }

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    private static LockClient client(LockBackend backend) {
        return new Builder(backend).leaseTime(Duration.ofSeconds(5)).build();
    }

    @Test
    void readWriteLocksAreRefusedByABackendWithoutReadWriteModes() {
        try (LockClient c = client(new Base())) {
            assertThatThrownBy(() -> c.readWriteLock("rw"))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("capabilities-test has no read-write locks");
        }
    }

    @Test
    void aNotifyingBackendIsGivenItsListenerBeforeItStarts() {
        Notifying backend = new Notifying();
        try (LockClient c = client(backend)) {
            assertThat(backend.calls).startsWith("listen", "start " + c.clientId());
        }
    }

    @Test
    void theCoreWithdrawsAPlaceInLineOnceWhenAWaiterTimesOutOrATryOnceFindsTheLockBusy() {
        Queueing backend = new Queueing();
        try (LockClient a = client(backend); LockClient b = client(backend)) {
            try (Lease held = a.lock("q").acquire(Duration.ofSeconds(1))) {
                assertThat(backend.withdrawals).hasValue(0); // never after a grant
                assertThat(b.lock("q").tryAcquire()).isEmpty();
                assertThat(backend.withdrawals).hasValue(1);
                assertThatThrownBy(() -> b.lock("q").acquire(Duration.ofMillis(50)))
                        .isInstanceOf(LockTimeoutException.class);
                assertThat(backend.withdrawals).hasValue(2);
                assertThat(held.isValid()).isTrue();
            }
            assertThat(backend.calls).contains("try q " + AcquireRequest.Patience.TRY_ONCE,
                    "try q " + AcquireRequest.Patience.WAIT);
        }
    }

    /**
     * A waiter told it is first in line ({@link AcquireResult.Busy#nextTry}) tries again within the hint, although
     * its backoff (5 s) and the holder's remaining lease (10 s) would have it sleep for seconds, and no release
     * in its own client wakes it (the holder is another client).
     */
    @Test
    void theHeadOfALineTriesAgainWithinTheBackendsHintWhateverItsBackoff() throws Exception {
        HeadOfLine backend = new HeadOfLine();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LockClient a = client(backend);
             LockClient b = new Builder(backend).leaseTime(Duration.ofSeconds(5)).minPollInterval(Duration.ofSeconds(5))
                     .maxPollInterval(Duration.ofSeconds(5)).build()) {
            Lease held = a.lock("h").acquire(Duration.ofSeconds(1));
            Future<Long> waiter = pool.submit(() -> {
                try (Lease ignored = b.lock("h").acquire(Duration.ofSeconds(30))) {
                    return System.nanoTime();
                }
            });
            while (backend.calls.stream().noneMatch(s -> s.equals("try h " + AcquireRequest.Patience.WAIT))) {
                Thread.onSpinWait();
            }
            long released = System.nanoTime();
            held.close();
            long granted = waiter.get(10, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(granted - released)).as("hand-over to the head of the line")
                    .isLessThan(Duration.ofSeconds(1));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aWaiterInterruptedInLineWithdrawsItsPlaceAndKeepsTheFlag() throws Exception {
        Queueing backend = new Queueing();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LockClient a = client(backend); LockClient b = client(backend);
             Lease ignored = a.lock("i").acquire(Duration.ofSeconds(1))) {
            CountDownLatch waiting = new CountDownLatch(1);
            Future<Boolean> waiter = pool.submit(() -> {
                waiting.countDown();
                try {
                    b.lock("i").acquire();
                    return false;
                } catch (dev.baton.LockInterruptedException e) {
                    return Thread.currentThread().isInterrupted();
                }
            });
            waiting.await();
            // interrupt once the waiter has asked at least once (it is then parked or about to park)
            while (backend.calls.stream().noneMatch(s -> s.equals("try i " + AcquireRequest.Patience.WAIT))) {
                Thread.onSpinWait();
            }
            pool.shutdownNow();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).as("interrupt flag kept").isTrue();
            assertThat(backend.withdrawals).hasValue(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aBlockingWaitDecidesTheGrantAndNotNowFallsBackToALocalWakeUp() throws Exception {
        Blocking backend = new Blocking();
        try (LockClient a = client(backend); LockClient b = client(backend)) {
            // Decided: the server's wait granted it (the test grants by releasing the holder inside the slice)
            Lease first = a.lock("b").acquire(Duration.ofSeconds(1));
            backend.answer = r -> {
                first.close();
                return new BlockingWait.Outcome.Decided(backend.tryAcquire(r));
            };
            try (Lease second = b.lock("b").acquire(Duration.ofSeconds(5))) {
                assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
                assertThat(backend.slices).hasValue(1);
            }
            // NotNow: the core parks; a release in this client wakes it and the next try takes the lock
            backend.answer = r -> new BlockingWait.Outcome.NotNow("test");
            Lease holder = a.lock("n").acquire(Duration.ofSeconds(1));
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<Long> waiter = pool.submit(() -> {
                    try (Lease l = a.lock("n").acquire(Duration.ofSeconds(30))) {
                        return l.fencingToken();
                    }
                });
                while (backend.slices.get() < 2) {
                    Thread.onSpinWait();
                }
                holder.close();
                assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(holder.fencingToken());
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
