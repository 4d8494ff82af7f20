package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.LockTimeoutException;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.AnnouncesTurns;
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
import java.util.concurrent.CompletableFuture;
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
import static org.awaitility.Awaitility.await;

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

    static class Notifying extends Base implements NotifiesReleases {
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

    /** Announces every turn (the core then parks at its longest poll); counts attempts. */
    static final class Announcing extends Notifying implements AnnouncesTurns {
        final AtomicInteger tries = new AtomicInteger();

        @Override
        public synchronized AcquireResult tryAcquire(AcquireRequest request) {
            tries.incrementAndGet();
            return super.tryAcquire(request);
        }

        @Override
        public void withdraw(AcquireRequest request) {
            calls.add("withdraw " + request.name());
        }
    }

    /**
     * A backend whose server announces each waiter's turn is not polled: the waiter parks for the longest poll (a
     * safety net) instead of backing off from the shortest (10 ms, 20 ms, … each a read of the line on the server),
     * and a release in the client leaves the next waiter to the server's announcement.
     */
    @Test
    void aWaiterIsNotPolledWhenTheServerAnnouncesItsTurn() throws Exception {
        Announcing backend = new Announcing();
        backend.held.put("p", new LeaseKey("p", "elsewhere#1", 99));
        try (LockClient b = new Builder(backend).leaseTime(Duration.ofSeconds(5)).minPollInterval(Duration.ofMillis(5))
                .maxPollInterval(Duration.ofSeconds(20)).build()) {
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> b.lock("p").acquire(Duration.ofSeconds(30)));
            await().atMost(Duration.ofSeconds(10)).until(() -> backend.tries.get() >= 1);
            Thread.sleep(500); // a 5 ms backoff would have polled about 6 times by now
            assertThat(backend.tries).as("attempts while parked").hasValue(1);
            backend.held.remove("p");
            backend.listener.released("p", "someone-else#2"); // another waiter's turn: this one keeps its park
            Thread.sleep(100);
            assertThat(backend.tries).hasValue(1);
            backend.listener.resynchronize(); // after a gap every waiter reads the line again
            waiter.get(10, TimeUnit.SECONDS).close();
            assertThat(backend.tries).hasValue(2);
        }
    }

    /**
     * A release the server announces as "this waiter is next" wakes that waiter alone: the client's other waiter for
     * the lock keeps its park (no extra round trips queued ahead of the one that can win), and is woken in its turn.
     */
    @Test
    void aReleaseNamingTheNextWaiterWakesOnlyThatWaiter() throws Exception {
        Notifying backend = new Notifying();
        Map<String, AtomicInteger> tries = new ConcurrentHashMap<>();
        Notifying counting = new Notifying() {
            @Override
            public synchronized AcquireResult tryAcquire(AcquireRequest request) {
                tries.computeIfAbsent(request.owner(), o -> new AtomicInteger()).incrementAndGet();
                return backend.tryAcquire(request);
            }

            @Override
            public synchronized boolean release(LeaseKey lease) {
                return backend.release(lease);
            }
        };
        backend.held.put("t", new LeaseKey("t", "elsewhere#1", 99)); // held by another process
        try (LockClient b = new Builder(counting).leaseTime(Duration.ofSeconds(5))
                .minPollInterval(Duration.ofSeconds(20)).maxPollInterval(Duration.ofSeconds(20)).build()) {
            CompletableFuture<Lease> first = new CompletableFuture<>();
            CompletableFuture<Lease> second = new CompletableFuture<>();
            Thread w1 = new Thread(() -> first.complete(b.lock("t").acquire(Duration.ofSeconds(30))));
            Thread w2 = new Thread(() -> second.complete(b.lock("t").acquire(Duration.ofSeconds(30))));
            w1.start();
            w2.start();
            String o1 = b.clientId() + "#" + w1.getId();
            String o2 = b.clientId() + "#" + w2.getId();
            await().atMost(Duration.ofSeconds(10)).until(() -> tries.getOrDefault(o1, new AtomicInteger()).get() >= 1
                    && tries.getOrDefault(o2, new AtomicInteger()).get() >= 1);
            backend.held.remove("t");
            counting.listener.released("t", o2); // the server's line: w2 is next

            Lease l2 = second.get(10, TimeUnit.SECONDS);
            assertThat(tries.get(o1)).as("w1 kept its park").hasValue(1);
            assertThat(first).isNotDone();
            l2.close(); // a release in this client wakes its waiters
            first.get(10, TimeUnit.SECONDS).close();
            assertThat(tries.get(o1)).hasValue(2);
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
            await().atMost(Duration.ofSeconds(10)).until(() -> backend.calls.stream()
                    .anyMatch(s -> s.equals("try h " + AcquireRequest.Patience.WAIT)));
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
            await().atMost(Duration.ofSeconds(10)).until(() -> backend.calls.stream()
                    .anyMatch(s -> s.equals("try i " + AcquireRequest.Patience.WAIT)));
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
                await().atMost(Duration.ofSeconds(10)).until(() -> backend.slices.get() >= 2);
                holder.close();
                assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(holder.fencingToken());
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
