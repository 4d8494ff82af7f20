package dev.baton.redis;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.WaiterProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The line of waiters lives by its waiters' heartbeats, not by their leases: a waiter killed with {@code kill -9}
 * keeps a free lock from the next live waiter for about a second whatever its lease, and a live waiter keeps its
 * place whatever its lease and poll interval. On the tests' shared Redis: the waiter process rebuilds
 * {@link RedisFixture} there.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisWaitingLineIT {
    /** Far below any lease in these tests, and far above the heartbeat's second, for a loaded machine. */
    private static final Duration DEAD_WAITER_BOUND = Duration.ofSeconds(5);
    private RedisFixture fixture;
    /** One thread per waiting task (the common pool may have a single thread on a small machine). */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    void open() {
        fixture = new RedisFixture();
    }

    @AfterAll
    void close() {
        threads.shutdownNow();
        fixture.close();
    }

    private static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    private long lineLength(String name) {
        return fixture.admin().zcard(RedisKeys.Lock.of(RedisFixture.PREFIX, name).line());
    }

    @Test
    void aFreeLockGoesToTheNextLiveWaiterSoonAfterTheWaiterAheadWasKilled() throws Exception {
        String name = unique("dead-waiter");
        // the live waiter polls only every 30 s: the server's side must hand it the lock
        try (LockClient h = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)));
             LockClient live = fixture.newClient(new ClientConfig(Duration.ofSeconds(5), Duration.ofSeconds(30)))) {
            Lease held = h.lock(name).acquire(Duration.ofSeconds(5));
            try (WaiterProcess dead = WaiterProcess.start(RedisFixture.class, name, Duration.ofSeconds(30))) {
                await().atMost(Duration.ofSeconds(20)).until(() -> lineLength(name) == 1);
                CompletableFuture<Long> granted = CompletableFuture.supplyAsync(() -> {
                    try (Lease l = live.lock(name).acquire(Duration.ofSeconds(60))) {
                        return System.nanoTime();
                    }
                }, threads);
                await().atMost(Duration.ofSeconds(5)).until(() -> lineLength(name) == 2);
                long killed = System.nanoTime();
                dead.kill();
                long released = System.nanoTime();
                held.close();
                long at = granted.get(60, TimeUnit.SECONDS);
                long afterRelease = TimeUnit.NANOSECONDS.toMillis(at - released);
                System.out.printf("[redis] a waiter with a 30 s lease killed in line: the live waiter behind it got"
                                + " the free lock %d ms after the release (%d ms after the kill)%n", afterRelease,
                        TimeUnit.NANOSECONDS.toMillis(at - killed));
                assertThat(afterRelease).as("release to the live waiter's grant, ms (dead waiter's lease 30 s)")
                        .isLessThanOrEqualTo(DEAD_WAITER_BOUND.toMillis());
            }
        }
    }

    @Test
    void aTryAcquireGetsAFreeLockSoonAfterItsOnlyWaiterWasKilled() throws Exception {
        String name = unique("dead-only-waiter");
        try (LockClient h = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)));
             LockClient other = fixture.newClient(ClientConfig.defaults())) {
            Lease held = h.lock(name).acquire(Duration.ofSeconds(5));
            try (WaiterProcess dead = WaiterProcess.start(RedisFixture.class, name, Duration.ofSeconds(30))) {
                await().atMost(Duration.ofSeconds(20)).until(() -> lineLength(name) == 1);
                dead.kill();
                held.close();
                long released = System.nanoTime();
                AtomicReference<Lease> got = new AtomicReference<>();
                await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(20))
                        .until(() -> other.lock(name).tryAcquire().map(l -> got.compareAndSet(null, l)).orElse(false));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released);
                System.out.printf("[redis] a waiter with a 30 s lease killed in line: tryAcquire() got the free lock"
                        + " %d ms after the release%n", ms);
                got.get().close();
                assertThat(ms).as("release to a successful tryAcquire(), ms (dead waiter's lease 30 s)")
                        .isLessThanOrEqualTo(DEAD_WAITER_BOUND.toMillis());
            }
        }
    }

    @Test
    void aWaiterWhoseLeaseIsShorterThanItsPollIntervalKeepsItsPlaceInLine() throws Exception {
        for (int round = 1; round <= 5; round++) {
            String name = unique("short-lease");
            try (LockClient h = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)));
                 LockClient shortLease = RedisLocks.builder(RedisURI.create(fixture.host(), fixture.port()))
                         .keyPrefix(RedisFixture.PREFIX).leaseTime(Duration.ofMillis(200))
                         .minPollInterval(Duration.ofMillis(500)).maxPollInterval(Duration.ofMillis(500)).build();
                 LockClient later = fixture.newClient(new ClientConfig(Duration.ofSeconds(5), Duration.ofSeconds(30)))) {
                Lease held = h.lock(name).acquire(Duration.ofSeconds(5));
                List<String> order = new CopyOnWriteArrayList<>();
                CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
                    try (Lease l = shortLease.lock(name).acquire(Duration.ofSeconds(30))) {
                        order.add("first arrival (200 ms lease, 500 ms poll)");
                    }
                }, threads);
                await().atMost(Duration.ofSeconds(5)).until(() -> lineLength(name) == 1);
                CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
                    try (Lease l = later.lock(name).acquire(Duration.ofSeconds(30))) {
                        order.add("second arrival");
                    }
                }, threads);
                await().atMost(Duration.ofSeconds(5)).until(() -> lineLength(name) == 2);
                // both wait through three of the first one's polls, seven of its leases
                Thread.sleep(1500);
                held.close();
                first.get(30, TimeUnit.SECONDS);
                second.get(30, TimeUnit.SECONDS);
                assertThat(order).as("round %d of 5: order of service", round)
                        .containsExactly("first arrival (200 ms lease, 500 ms poll)", "second arrival");
            }
        }
    }

    @Test
    void aDeadWaitersPlaceLeavesTheLineWithoutAReleaseOrAnOperator() throws Exception {
        String name = unique("dead-place");
        try (LockClient h = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)));
             LockClient live = fixture.newClient(new ClientConfig(Duration.ofSeconds(30), Duration.ofSeconds(30)))) {
            Lease held = h.lock(name).acquire(Duration.ofSeconds(5));
            try (WaiterProcess dead = WaiterProcess.start(RedisFixture.class, name, Duration.ofSeconds(30))) {
                await().atMost(Duration.ofSeconds(20)).until(() -> lineLength(name) == 1);
                CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
                    try (Lease l = live.lock(name).acquire(Duration.ofSeconds(60))) {
                        // granted once the holder lets go
                    }
                }, threads);
                await().atMost(Duration.ofSeconds(5)).until(() -> lineLength(name) == 2);
                long killed = System.nanoTime();
                dead.kill();
                // the lock stays held: nobody releases, nobody purges; the live waiter's client drops the dead place
                await().atMost(DEAD_WAITER_BOUND).pollInterval(Duration.ofMillis(20)).until(() -> lineLength(name) == 1);
                System.out.printf("[redis] a dead waiter's place (30 s lease) left the line of a held lock %d ms after"
                        + " the kill%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
                assertThat(live.list()).filteredOn(i -> i.name().equals(name)).singleElement()
                        .satisfies(i -> assertThat(i.line()).as("the line list() shows").singleElement()
                                .satisfies(w -> assertThat(w.owner()).startsWith(live.clientId() + "#")));
                held.close();
                waiting.get(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void listShowsTheLineInOrderWithWhenEachWaiterCameAndUntilWhenItsPlaceLives() throws Exception {
        String name = unique("listed-line");
        ClientConfig longLease = new ClientConfig(Duration.ofSeconds(30), Duration.ofSeconds(30));
        try (LockClient h = fixture.newClient(longLease);
             LockClient first = fixture.newClient(longLease);
             LockClient second = fixture.newClient(longLease)) {
            Lease held = h.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<Void> a = CompletableFuture.runAsync(() -> first.lock(name).acquire(Duration.ofSeconds(60)).close(),
                    threads);
            await().atMost(Duration.ofSeconds(5)).until(() -> lineLength(name) == 1);
            CompletableFuture<Void> b = CompletableFuture.runAsync(() -> second.lock(name).acquire(Duration.ofSeconds(60)).close(),
                    threads);
            await().atMost(Duration.ofSeconds(5)).until(() -> lineLength(name) == 2);
            LockInfo info = h.list().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
            assertThat(info.held()).isTrue();
            assertThat(info.holder()).startsWith(h.clientId() + "#");
            assertThat(info.line()).hasSize(2);
            LockInfo.Waiter w1 = info.line().get(0);
            LockInfo.Waiter w2 = info.line().get(1);
            assertThat(w1.owner()).as("first in line").startsWith(first.clientId() + "#");
            assertThat(w2.owner()).as("second in line").startsWith(second.clientId() + "#");
            assertThat(w1.since()).isBefore(w2.since());
            // the tests' Redis runs on this host: its clock is this machine's
            Instant now = Instant.now();
            for (LockInfo.Waiter w : info.line()) {
                assertThat(w.aliveUntil()).as("%s: alive until (a heartbeat's second, not a 30 s lease)", w.owner())
                        .isAfter(w.since()).isBefore(now.plusSeconds(3));
            }
            held.close();
            a.get(30, TimeUnit.SECONDS);
            b.get(30, TimeUnit.SECONDS);
            assertThat(h.list()).filteredOn(i -> i.name().equals(name)).allSatisfy(i -> assertThat(i.line()).isEmpty());
        }
    }

    @Test
    void theHeartbeatIsOneScriptPerClientForAllItsWaiters() throws Exception {
        int waiters = 10;
        AtomicInteger scripts = new AtomicInteger();
        RedisClient mine = RedisClient.create(RedisURI.create(fixture.host(), fixture.port()));
        mine.addListener(new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                var type = event.getCommand().getType();
                if (type == CommandType.EVALSHA || type == CommandType.EVAL) {
                    scripts.incrementAndGet();
                }
            }
        });
        List<String> names = new ArrayList<>();
        List<Lease> held = new ArrayList<>();
        try (LockClient h = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(60)));
             LockClient c = RedisLocks.builder(mine).keyPrefix(RedisFixture.PREFIX).leaseTime(Duration.ofSeconds(30))
                     .maxPollInterval(Duration.ofSeconds(60)).build()) {
            for (int i = 0; i < waiters; i++) {
                names.add(unique("beat"));
                held.add(h.lock(names.get(i)).acquire(Duration.ofSeconds(5)));
            }
            List<CompletableFuture<Void>> waiting = new ArrayList<>();
            for (String name : names) {
                waiting.add(CompletableFuture.runAsync(() -> c.lock(name).acquire(Duration.ofSeconds(60)).close(), threads));
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> names.stream().allMatch(n -> lineLength(n) == 1));
            Thread.sleep(6000); // the waiters' backoff grows to seconds: what remains is mostly the heartbeat
            scripts.set(0);
            long start = System.nanoTime();
            Thread.sleep(2000);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            int calls = scripts.get();
            System.out.printf("[redis] %d script calls in %d ms from one client keeping %d places in line (heartbeat"
                    + " every %d ms, polls every few seconds): %.2f per waiter per second%n", calls, ms, waiters,
                    RedisLockBackend.HEARTBEAT_INTERVAL.toMillis(), calls * 1000.0 / ms / waiters);
            assertThat(names).as("every place is still in line").allSatisfy(n -> assertThat(lineLength(n)).isOne());
            assertThat(calls).as("one heartbeat per interval for all %d places, plus at most one poll per waiter",
                    waiters).isBetween(1, (int) (ms / RedisLockBackend.HEARTBEAT_INTERVAL.toMillis()) + 2 + waiters);
            held.forEach(Lease::close);
            for (CompletableFuture<Void> w : waiting) {
                w.get(30, TimeUnit.SECONDS);
            }
        } finally {
            mine.shutdown();
        }
    }
}
