package dev.baton.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * W2: 4 independent clients x 2 threads on one lock, each thread acquiring again as soon as it released.
 * Plain harness (JMH cannot time a hand-over between threads of different clients).
 *
 * <p>Per grant it records: the wait (acquire called to acquire returned), who held the lock before (same
 * thread, another thread of the same client, another client) and, for a hand-over from another thread, the
 * gap from the previous holder calling release to this thread returning from acquire. Safety: an
 * {@code inside} counter that must never exceed 1, and an unguarded counter, incremented under the lock
 * with a plain read and write, that must equal the number of grants.
 */
final class Contended {
    static final int CLIENTS = 4;
    static final int THREADS_PER_CLIENT = 2;

    record Result(String subject, double seconds, long grants, long crossClient, long sameThread, long sameClientOther,
                  long[] waitMicros, long[] crossGapMicros, long[] anyGapMicros, int maxInside, long unguarded,
                  long allGrants, double statementsPerGrant, double serverFsyncsPerGrant, long[] grantsPerThread,
                  String error) {
        double grantsPerSecond() {
            return grants / seconds;
        }

        double crossClientPerSecond() {
            return crossClient / seconds;
        }

        boolean safe() {
            return error == null && maxInside <= 1 && unguarded == allGrants;
        }
    }

    /** Shared state of one run; {@code unguarded} is deliberately a plain field. */
    private static final class Shared {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger maxInside = new AtomicInteger();
        long unguarded;
        volatile long lastReleaseNanos;
        volatile int lastThread = -1;
        volatile int lastClient = -1;
        volatile boolean stop;
    }

    private static final class PerThread {
        final LongList waits = new LongList();
        final LongList crossGaps = new LongList();
        final LongList anyGaps = new LongList();
        long grants;
        long measured;
        long cross;
        long sameThread;
        long sameClient;
        Throwable failure;
    }

    private Contended() {
    }

    static Result run(Subject subject, double warmupSeconds, double seconds) {
        String lock = "w2-" + subject.id();
        List<Subject.Client> clients = new ArrayList<>();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(subject.open("w2-" + subject.id() + "-c" + i));
            }
            // create the lock's row/node once, outside the measurement
            clients.get(0).acquire(lock).release();
            long statementsBefore = clients.stream().mapToLong(Subject.Client::statements).sum();
            long fsyncsBefore = ServerStats.fsyncs(subject.server());

            Shared shared = new Shared();
            PerThread[] per = new PerThread[CLIENTS * THREADS_PER_CLIENT];
            Thread[] threads = new Thread[per.length];
            CountDownLatch start = new CountDownLatch(1);
            long[] window = new long[2];
            for (int t = 0; t < per.length; t++) {
                int thread = t;
                int client = t / THREADS_PER_CLIENT;
                per[t] = new PerThread();
                PerThread me = per[t];
                Subject.Client c = clients.get(client);
                threads[t] = new Thread(() -> {
                    try {
                        start.await();
                        while (!shared.stop) {
                            long t0 = System.nanoTime();
                            Subject.Held held = c.acquire(lock);
                            long t1 = System.nanoTime();
                            int in = shared.inside.incrementAndGet();
                            shared.maxInside.accumulateAndGet(in, Math::max);
                            int prevThread = shared.lastThread;
                            int prevClient = shared.lastClient;
                            long released = shared.lastReleaseNanos;
                            shared.unguarded = shared.unguarded + 1;
                            me.grants++;
                            if (t0 - window[0] >= 0 && window[1] - t1 > 0) {
                                me.measured++;
                                me.waits.add((t1 - t0) / 1000);
                                if (prevThread == thread) {
                                    me.sameThread++;
                                } else if (prevClient == client) {
                                    me.sameClient++;
                                    me.anyGaps.add((t1 - released) / 1000);
                                } else {
                                    me.cross++;
                                    me.crossGaps.add((t1 - released) / 1000);
                                    me.anyGaps.add((t1 - released) / 1000);
                                }
                            }
                            shared.inside.decrementAndGet();
                            shared.lastThread = thread;
                            shared.lastClient = client;
                            shared.lastReleaseNanos = System.nanoTime();
                            held.release();
                        }
                    } catch (Throwable e) {
                        me.failure = e;
                    }
                }, "w2-" + subject.id() + "-" + client + "." + (t % THREADS_PER_CLIENT));
                threads[t].start();
            }
            long now = System.nanoTime();
            window[0] = now + (long) (warmupSeconds * 1e9);
            window[1] = window[0] + (long) (seconds * 1e9);
            start.countDown();
            TimeUnit.NANOSECONDS.sleep(window[1] - System.nanoTime());
            shared.stop = true;
            String error = null;
            for (Thread t : threads) {
                t.join(60_000);
                if (t.isAlive()) {
                    error = "thread " + t.getName() + " did not finish within 60 s after the run";
                    t.interrupt();
                }
            }
            long statements = clients.stream().mapToLong(Subject.Client::statements).sum() - statementsBefore;
            long fsyncs = ServerStats.fsyncs(subject.server()) - fsyncsBefore;
            LongList waits = new LongList();
            LongList cross = new LongList();
            LongList any = new LongList();
            long grants = 0;
            long all = 0;
            long crossN = 0;
            long sameT = 0;
            long sameC = 0;
            long[] perThread = new long[per.length];
            for (int i = 0; i < per.length; i++) {
                PerThread p = per[i];
                if (p.failure != null && error == null) {
                    error = p.failure.getClass().getSimpleName() + ": " + p.failure.getMessage();
                    p.failure.printStackTrace();
                }
                waits.addAll(p.waits);
                cross.addAll(p.crossGaps);
                any.addAll(p.anyGaps);
                grants += p.measured;
                all += p.grants;
                crossN += p.cross;
                sameT += p.sameThread;
                sameC += p.sameClient;
                perThread[i] = p.measured;
            }
            double stmtPerGrant = statementsBefore < 0 ? -1 : (double) statements / all;
            double fsyncPerGrant = fsyncsBefore < 0 ? -1 : (double) fsyncs / all;
            return new Result(subject.id(), seconds, grants, crossN, sameT, sameC, waits.sorted(), cross.sorted(),
                    any.sorted(), shared.maxInside.get(), shared.unguarded, all, stmtPerGrant, fsyncPerGrant,
                    perThread, error);
        } catch (Throwable e) {
            e.printStackTrace();
            return new Result(subject.id(), seconds, 0, 0, 0, 0, new long[0], new long[0], new long[0], 0, 0, 0, -1,
                    -1, new long[0], e.getClass().getSimpleName() + ": " + e.getMessage());
        } finally {
            for (Subject.Client c : clients) {
                try {
                    c.close();
                } catch (Exception e) {
                    System.err.println("closing a " + subject.id() + " client: " + e);
                }
            }
        }
    }

    /** A growable long array. */
    static final class LongList {
        private long[] a = new long[1024];
        private int n;

        void add(long v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        void addAll(LongList o) {
            for (int i = 0; i < o.n; i++) {
                add(o.a[i]);
            }
        }

        long[] sorted() {
            long[] s = Arrays.copyOf(a, n);
            Arrays.sort(s);
            return s;
        }
    }

    /** The value at quantile q of a sorted array, or -1 if empty. */
    static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return -1;
        }
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}
