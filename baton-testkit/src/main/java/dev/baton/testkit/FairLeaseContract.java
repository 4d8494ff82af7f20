package dev.baton.testkit;

import dev.baton.Lease;
import dev.baton.LockClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rung 4b — fairness, for lease strategies that promise it (the JDBC lease strategy: a waiter takes a place in
 * line on the server). Several clients, each with several threads, contend for one lock in a tight loop; a lock
 * released while others wait goes to the earliest waiter, not back to the client (or thread) that let it go.
 *
 * <p>Strategies that make no such promise (the in-memory and Redis leases today) stay on {@link LeaseContract}.
 */
public abstract class FairLeaseContract extends LeaseContract {
    /** How many clients the rung runs, two threads each. */
    public static final int CLIENTS = 4;
    private static final int THREADS = 2;
    /** How long the threads keep asking. */
    private static final Duration RUN = Duration.ofSeconds(3);
    /** Each client's least share of the grants (an even share is 25 %). */
    private static final double LEAST_SHARE = 0.15;
    /**
     * The longest wait may be at most this multiple of the median wait: issue 13's target. A line of 8 measured
     * 2.0–8.6× on this project's machines (the unfair hand-over: 41× to 1,498×).
     */
    private static final int LONGEST_OVER_MEDIAN = 20;
    /**
     * The most grants that may go, while one acquisition waits, to acquisitions that asked after it did: five turns
     * of the line of 8. In a line none would, once it has its place; the turns allow for those that got their places
     * while it was still getting its own, on a loaded 2-core machine, at up to about 1,000 grants a second
     * (PostgreSQL, woken by its notice). Seen: up to 25 on PostgreSQL, 16 on MariaDB with {@code autoCommit=false},
     * 8 on SQLite, whose ticket is a write that may miss a few gaps in SQLite's write lock, which has no queue; once
     * in line nobody was passed over by more than the 7 ahead (a run with PostgreSQL's statement log on). Clients that retry a
     * try-once acquisition every millisecond, ShedLock's way, are overtaken 88 to 153 times
     * ({@code FairnessRungControlIT}). (The rung used to bound every grant to others while an acquisition waited,
     * at three turns; when hand-overs got two to three times faster, the same few milliseconds before a place is
     * taken held 24 to 33 of them. Those ahead when it asked are not counted now.)
     */
    public static final int MOST_OVERTAKEN = 5 * (CLIENTS * THREADS - 1);

    /**
     * The most grants, while one acquisition waits, to acquisitions that asked after it ({@value #MOST_OVERTAKEN}
     * unless a fixture says why its database needs more: the place in line is itself a write, and a database whose
     * write lock is not taken in turn may keep a newcomer out of the line for a while).
     */
    protected int mostOvertaken() {
        return MOST_OVERTAKEN;
    }

    /**
     * The longest wait as a multiple of the median wait ({@value #LONGEST_OVER_MEDIAN} unless a fixture says why
     * its database needs more).
     */
    protected int longestOverMedian() {
        return LONGEST_OVER_MEDIAN;
    }

    /**
     * 4 clients × 2 threads acquire and release one lock for 3 s, each thread again as soon as it let go. Every
     * client gets at least 15 % of the grants; while an acquisition waits, no more than {@value #MOST_OVERTAKEN} grants
     * (unless a fixture says why it needs more) go to acquisitions that asked after it (a line lets only those ahead
     * go first; a strategy that hands the lock back to whoever just let it go is overtaken a hundred times and more);
     * and no acquisition waits longer than 20 × the median wait.
     * The two bounds leave out each thread's first acquisition: all eight ask at once, on cold code paths and new
     * connections, so the first round's waits say nothing about the line (they are in the shares).
     *
     * <p>The share of hand-overs that go to another client is printed, not asserted: a strict line of 8 threads
     * repeats one cyclic order, which puts a client's two threads next to each other anywhere from never to every
     * other turn. Tokens increase in grant order (exclusion holds throughout).
     */
    @Test
    void waitersOfEveryClientGetTheLockInTurn() throws Exception {
        String name = unique("fair");
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(client());
        }
        try {
            checkTurns(fixture.name(), clients, name, mostOvertaken(), longestOverMedian());
        } finally {
            clients.forEach(LockClient::close);
        }
    }

    /**
     * How long after a release a free lock may take to reach the next live waiter while a waiter ahead of it in line
     * was killed: far below every lease of the rung (30 s), and above the strategy's own bound (about a second) by
     * enough that a loaded machine cannot flake it.
     */
    public static final Duration DEAD_WAITER_BOUND = Duration.ofSeconds(5);

    /**
     * A place in line lives only while its waiter is alive: a waiter process with a 30 s lease is killed
     * ({@code kill -9}) while it waits in line ahead of a live waiter of this JVM; the holder releases; the live
     * waiter gets the lock within {@link #DEAD_WAITER_BOUND}, whatever the dead waiter's lease. The live waiter
     * polls at most every 30 s: the strategy itself must hand it the lock.
     */
    @Test
    void aFreeLockGoesToTheNextLiveWaiterSoonAfterTheWaiterAheadWasKilled() throws Exception {
        String name = unique("dead-waiter");
        Duration lease = Duration.ofSeconds(30);
        try (LockClient holder = fixture.newClient(ClientConfig.lease(lease));
             LockClient live = fixture.newClient(new ClientConfig(lease, lease))) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            try (WaiterProcess dead = WaiterProcess.start(fixtureClass(), name, lease)) {
                await("the waiter process takes its place").atMost(Duration.ofSeconds(30))
                        .until(() -> fixture.placesInLine(name) == 1);
                CompletableFuture<Long> granted = CompletableFuture.supplyAsync(() -> {
                    try (Lease l = live.lock(name).acquire(Duration.ofSeconds(90))) {
                        return System.nanoTime();
                    }
                });
                await("the live waiter takes its place behind it").atMost(Duration.ofSeconds(10))
                        .until(() -> fixture.placesInLine(name) == 2);
                long killed = System.nanoTime();
                dead.kill();
                long released = System.nanoTime();
                held.close();
                long at = granted.get(90, TimeUnit.SECONDS);
                long ms = TimeUnit.NANOSECONDS.toMillis(at - released);
                System.out.printf("[%s] a waiter with a 30 s lease killed in line: the live waiter behind it got the"
                                + " free lock %d ms after the release (%d ms after the kill; bound %d ms)%n",
                        fixture.name(), ms, TimeUnit.NANOSECONDS.toMillis(at - killed), DEAD_WAITER_BOUND.toMillis());
                assertThat(ms).as("release to the live waiter's grant, ms (the dead waiter's lease: 30 s)")
                        .isLessThanOrEqualTo(DEAD_WAITER_BOUND.toMillis());
            }
        }
    }

    /**
     * A live waiter keeps its place however long it waits, beyond any heartbeat's expiry: a waiter that polls at
     * most every 30 s waits 3 s in line; a waiter of another client takes its place behind it; the release goes to
     * the first.
     */
    @Test
    void aLiveWaiterKeepsItsPlaceThroughALongWait() throws Exception {
        String name = unique("long-wait");
        Duration lease = Duration.ofSeconds(30);
        try (LockClient holder = fixture.newClient(ClientConfig.lease(lease));
             LockClient first = fixture.newClient(new ClientConfig(lease, lease));
             LockClient second = fixture.newClient(new ClientConfig(lease, lease))) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            List<String> order = Collections.synchronizedList(new ArrayList<>());
            CompletableFuture<Void> a = CompletableFuture.runAsync(() -> {
                try (Lease l = first.lock(name).acquire(Duration.ofSeconds(60))) {
                    order.add("first");
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.placesInLine(name) == 1);
            Thread.sleep(3000); // a long wait: several heartbeats' expiry, no attempt (the waiter polls every 30 s)
            CompletableFuture<Void> b = CompletableFuture.runAsync(() -> {
                try (Lease l = second.lock(name).acquire(Duration.ofSeconds(60))) {
                    order.add("second");
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.placesInLine(name) == 2);
            held.close();
            CompletableFuture.allOf(a, b).get(60, TimeUnit.SECONDS);
            assertThat(order).as("grant order after the release").containsExactly("first", "second");
        }
    }

    /**
     * The rung itself, on {@code clients} (4, each with connections of its own) and the lock {@code name}: 2 threads
     * per client for 3 s, then the checks of {@link #waitersOfEveryClientGetTheLockInTurn} with the given bounds.
     * Public so that a control can run it on a client that is not fair and see it fail.
     */
    public static void checkTurns(String fixtureName, List<LockClient> clients, String name, int overtakenBound,
                                  int longestOverMedian) throws InterruptedException {
        record Grant(int client, int thread, long token, long asked, long waitedNanos, long passedOver,
                     boolean first) {
        }
        List<Grant> order = Collections.synchronizedList(new ArrayList<>());
        // grants are made one at a time (under the lock), so this counts them in order
        AtomicLong granted = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        long[] end = new long[1];
        for (int c = 0; c < CLIENTS; c++) {
            for (int t = 0; t < THREADS; t++) {
                int client = c;
                int thread = t;
                LockClient locks = clients.get(c);
                Thread th = new Thread(() -> {
                    try {
                        start.await();
                        boolean first = true;
                        while (System.nanoTime() - end[0] < 0 && failure.get() == null) {
                            long asked = System.nanoTime();
                            long before = granted.get();
                            try (Lease lease = locks.lock(name).acquire(Duration.ofSeconds(30))) {
                                long waited = System.nanoTime() - asked;
                                long passedOver = granted.incrementAndGet() - before - 1;
                                Grant g = new Grant(client, thread, lease.fencingToken(), asked, waited, passedOver,
                                        first);
                                order.add(g);
                                first = false;
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "fair-" + c + "-" + t);
                threads.add(th);
                th.start();
            }
        }
        end[0] = System.nanoTime() + RUN.toNanos();
        start.countDown();
        for (Thread th : threads) {
            th.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(th.isAlive()).as("thread %s still running after 60 s", th.getName()).isFalse();
        }
        assertThat(failure.get()).as("an acquisition failed").isNull();

        List<Grant> all = new ArrayList<>(order);
        int total = all.size();
        int[] perClient = new int[CLIENTS];
        int crossClient = 0;
        long previousToken = Long.MIN_VALUE;
        for (int i = 0; i < total; i++) {
            Grant g = all.get(i);
            perClient[g.client()]++;
            if (i > 0 && all.get(i - 1).client() != g.client()) {
                crossClient++;
            }
            assertThat(g.token()).as("tokens increase in grant order").isGreaterThan(previousToken);
            previousToken = g.token();
        }
        assertThat(total).as("grants in %s", RUN).isGreaterThanOrEqualTo(CLIENTS * THREADS * 2);
        // (each thread's first acquisition is the warm-up: all 8 ask at once, on cold code and new connections; seen:
        // the four longest waits of a PostgreSQL run, 65-98 ms against a median of 5.5 ms, were all first ones)
        List<Grant> warm = all.stream().filter(g -> !g.first()).toList();
        long mostPassedOver = warm.stream().mapToLong(Grant::passedOver).max().orElse(0);
        // overtaken: of the grants made while an acquisition waited (all in grant order), those to acquisitions
        // that asked after it did
        long mostOvertaken = 0;
        for (int i = 0; i < total; i++) {
            Grant g = all.get(i);
            if (g.first()) {
                continue;
            }
            long overtaken = 0;
            for (int j = Math.max(0, i - (int) g.passedOver()); j < i; j++) {
                if (all.get(j).asked() - g.asked() > 0) {
                    overtaken++;
                }
            }
            mostOvertaken = Math.max(mostOvertaken, overtaken);
        }
        long[] waits = warm.stream().mapToLong(Grant::waitedNanos).sorted().toArray();
        long median = waits[waits.length / 2];
        long p99 = waits[Math.min(waits.length - 1, (int) (waits.length * 0.99))];
        long longest = waits[waits.length - 1];
        StringBuilder shares = new StringBuilder();
        for (int c = 0; c < CLIENTS; c++) {
            shares.append(String.format(" client%d=%.1f%%", c, 100.0 * perClient[c] / total));
        }
        System.out.printf("FAIRNESS %s: %d grants in %d s (%.1f cross-client hand-overs/s, same client %.1f %%);"
                        + " shares:%s; after each thread's first: passed over at most %d times, overtaken at most %d times; wait median %.2f ms,"
                        + " p99 %.2f ms, longest %.2f ms (%.1f× median)%n",
                fixtureName, total, RUN.toSeconds(), crossClient / (double) RUN.toSeconds(),
                total > 1 ? 100.0 * (total - 1 - crossClient) / (total - 1) : 0.0, shares, mostPassedOver,
                mostOvertaken,
                median / 1e6, p99 / 1e6, longest / 1e6, longest / (double) Math.max(1, median));

        assertThat(mostOvertaken).as("grants, while one acquisition waited, to acquisitions that asked after it")
                .isLessThanOrEqualTo(overtakenBound);
        for (int c = 0; c < CLIENTS; c++) {
            assertThat(perClient[c] / (double) total)
                    .as("client %d's share of %d grants (per client: %s)", c, total, Arrays.toString(perClient))
                    .isGreaterThanOrEqualTo(LEAST_SHARE);
        }
        assertThat(longest)
                .as("longest wait %.2f ms vs median %.2f ms", longest / 1e6, median / 1e6)
                .isLessThanOrEqualTo(longestOverMedian * Math.max(median, TimeUnit.MILLISECONDS.toNanos(1)));
    }
}
