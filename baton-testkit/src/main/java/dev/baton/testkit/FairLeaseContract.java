package dev.baton.testkit;

import dev.baton.Lease;
import dev.baton.LockClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rung 4b — fairness, for lease strategies that promise it (the JDBC lease strategy: a waiter takes a place in
 * line on the server). Several clients, each with several threads, contend for one lock in a tight loop; a lock
 * released while others wait goes to the earliest waiter, not back to the client (or thread) that let it go.
 *
 * <p>Strategies that make no such promise (the in-memory and Redis leases today) stay on {@link LeaseContract}.
 */
public abstract class FairLeaseContract extends LeaseContract {
    /** Clients and threads per client contending for the one lock. */
    private static final int CLIENTS = 4;
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
     * The most grants to others that one acquisition may see while it waits: in a line of 8 threads at most the
     * 7 ahead of it; three times that allows for grants made between the call and its place in line on a loaded
     * machine (seen: 15 on the MySQL dialect). The unfair hand-over passed waiters over 56 to 901 times.
     */
    private static final int MOST_PASSED_OVER = 3 * (CLIENTS * THREADS - 1);

    /**
     * The most grants to others that one acquisition may see while it waits ({@value #MOST_PASSED_OVER} unless a
     * fixture says why its database needs more: the place in line is itself a write, and a database whose write
     * lock is not taken in turn may keep a newcomer out of the line for a while).
     */
    protected int mostPassedOver() {
        return MOST_PASSED_OVER;
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
     * client gets at least 15 % of the grants; no acquisition sees more than 21 grants to others while it waits
     * (a line of 8 threads lets at most the 7 ahead go first; a strategy that hands the lock back to whoever just
     * let it go passes a waiter over hundreds of times); and no acquisition waits longer than 20 × the median wait.
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
            record Grant(int client, int thread, long token, long waitedNanos, long passedOver) {
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
                            while (System.nanoTime() - end[0] < 0 && failure.get() == null) {
                                long asked = System.nanoTime();
                                long before = granted.get();
                                try (Lease lease = locks.lock(name).acquire(Duration.ofSeconds(30))) {
                                    long waited = System.nanoTime() - asked;
                                    long passedOver = granted.incrementAndGet() - before - 1;
                                    Grant g = new Grant(client, thread, lease.fencingToken(), waited, passedOver);
                                    order.add(g);
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
            long mostPassedOver = all.stream().mapToLong(Grant::passedOver).max().orElse(0);
            long[] waits = all.stream().mapToLong(Grant::waitedNanos).sorted().toArray();
            long median = waits[waits.length / 2];
            long p99 = waits[Math.min(waits.length - 1, (int) (waits.length * 0.99))];
            long longest = waits[waits.length - 1];
            StringBuilder shares = new StringBuilder();
            for (int c = 0; c < CLIENTS; c++) {
                shares.append(String.format(" client%d=%.1f%%", c, 100.0 * perClient[c] / total));
            }
            System.out.printf("FAIRNESS %s: %d grants in %d s (%.1f cross-client hand-overs/s, same client %.1f %%);"
                            + " shares:%s; passed over at most %d times; wait median %.2f ms, p99 %.2f ms,"
                            + " longest %.2f ms (%.1f× median)%n",
                    fixture.name(), total, RUN.toSeconds(), crossClient / (double) RUN.toSeconds(),
                    total > 1 ? 100.0 * (total - 1 - crossClient) / (total - 1) : 0.0, shares, mostPassedOver,
                    median / 1e6, p99 / 1e6, longest / 1e6, longest / (double) Math.max(1, median));

            assertThat(total).as("grants in %s", RUN).isGreaterThanOrEqualTo(CLIENTS * THREADS * 2);
            for (int c = 0; c < CLIENTS; c++) {
                assertThat(perClient[c] / (double) total)
                        .as("client %d's share of %d grants (per client: %s)", c, total, Arrays.toString(perClient))
                        .isGreaterThanOrEqualTo(LEAST_SHARE);
            }
            assertThat(mostPassedOver).as("grants to others that one waiter saw while it waited")
                    .isLessThanOrEqualTo(mostPassedOver());
            assertThat(longest)
                    .as("longest wait %.2f ms vs median %.2f ms", longest / 1e6, median / 1e6)
                    .isLessThanOrEqualTo(longestOverMedian() * Math.max(median, TimeUnit.MILLISECONDS.toNanos(1)));
        } finally {
            clients.forEach(LockClient::close);
        }
    }
}
