package dev.baton.jdbc.scheduled;

import dev.baton.Lease;
import dev.baton.LockInfo;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.fixtures.TxDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** {@link JdbcLockClient#runOnce}: scheduled-task semantics on the lease table, on every database. */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ScheduledRunIT {
    private final List<TxDatabase> dbs = new ArrayList<>();

    List<TxDatabase> databases() {
        if (dbs.isEmpty()) {
            dbs.addAll(TxDatabase.all());
        }
        return dbs;
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    /** Sleeps at least {@code d} by the monotonic clock (a scenario's precondition, not a wait for an outcome). */
    private static void sleepPast(Duration d) {
        long until = System.nanoTime() + d.toNanos();
        for (long left = d.toNanos(); left > 0; left = until - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
        }
    }

    private static LockInfo row(JdbcLockClient locks, String name) {
        return locks.list().stream().filter(i -> i.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no lease row for '" + name + "'"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aQuickTaskRunsOnceAndItsNameStaysTakenForAtLeastFor(TxDatabase db) {
        JdbcLockClient a = db.client(db.pool(2));
        JdbcLockClient b = db.client(db.pool(2));
        String name = TxDatabase.unique("task");
        AtomicInteger runs = new AtomicInteger();
        Duration atLeast = Duration.ofMillis(700);
        long t0 = System.nanoTime();
        assertThat(a.runOnce(name, Duration.ofSeconds(30), atLeast, runs::incrementAndGet)).isTrue();
        assertThat(runs.get()).isEqualTo(1);
        // another instance on a skewed schedule, and the same one again: not run
        assertThat(b.runOnce(name, Duration.ofSeconds(30), atLeast, runs::incrementAndGet)).isFalse();
        assertThat(a.runOnce(name, Duration.ofSeconds(30), atLeast, runs::incrementAndGet)).isFalse();
        assertThat(runs.get()).isEqualTo(1);
        LockInfo info = row(b, name);
        assertThat(info.held()).isTrue();
        assertThat(info.holder()).startsWith(a.clientId() + "#");
        // kept exactly atLeastFor after the grant, by the database clock (not atMostFor)
        assertThat(Duration.between(info.acquiredAt(), info.expiresAt())).isEqualTo(atLeast);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                .until(() -> b.runOnce(name, Duration.ofSeconds(30), atLeast, runs::incrementAndGet));
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(runs.get()).isEqualTo(2);
        assertThat(millis).isGreaterThanOrEqualTo(atLeast.toMillis() - 50);
        System.out.printf("%s: a task kept for atLeastFor %d ms ran again %d ms after the first run%n",
                db, atLeast.toMillis(), millis);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aTaskLongerThanAtLeastForFreesTheNameWhenItEnds(TxDatabase db) {
        JdbcLockClient a = db.client(db.pool(2));
        JdbcLockClient b = db.client(db.pool(2));
        String name = TxDatabase.unique("task-long");
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Boolean> first = pool.submit(() -> a.runOnce(name, Duration.ofSeconds(30), Duration.ofMillis(1), () -> {
                running.countDown();
                TxDatabase.await(finish);
                // the premise: the task runs longer than atLeastFor (1 ms). Without this it could end within that
                // millisecond (SQLite in-process, seen in CI), and its name then rightly stayed taken until then
                sleepPast(Duration.ofMillis(20));
            }));
            TxDatabase.await(running);
            assertThat(b.runOnce(name, Duration.ofSeconds(30), Duration.ofMillis(1), () -> { })).isFalse();
            finish.countDown();
            assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(row(b, name).held()).isFalse();
            assertThat(b.runOnce(name, Duration.ofSeconds(30), Duration.ofMillis(1), () -> { })).isTrue();
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            finish.countDown();
            pool.shutdownNow();
        }
    }

    /** A runner that hangs (or died) keeps the name only atMostFor; its late end cannot touch the new run's row. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aStuckRunnerFreesTheNameAfterAtMostFor(TxDatabase db) throws Exception {
        JdbcLockClient a = db.client(db.pool(2));
        JdbcLockClient b = db.client(db.pool(2));
        String name = TxDatabase.unique("task-stuck");
        Duration atMost = Duration.ofMillis(600);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch unstick = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            long t0 = System.nanoTime();
            Future<Boolean> stuck = pool.submit(() -> a.runOnce(name, atMost, Duration.ofMillis(100), () -> {
                running.countDown();
                TxDatabase.await(unstick);
            }));
            TxDatabase.await(running);
            assertThat(b.runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(20), () -> { })).isFalse();
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                    .until(() -> b.runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(20), () -> { }));
            long millis = (System.nanoTime() - t0) / 1_000_000;
            assertThat(millis).isGreaterThanOrEqualTo(atMost.toMillis() - 50);
            long newToken = row(b, name).fencingToken();
            unstick.countDown();
            assertThat(stuck.get(10, TimeUnit.SECONDS)).isTrue();
            LockInfo after = row(b, name);
            assertThat(after.held()).isTrue();
            assertThat(after.holder()).startsWith(b.clientId() + "#");
            assertThat(after.fencingToken()).isEqualTo(newToken);
            System.out.printf("%s: a stuck runner's name (atMostFor %d ms) was taken over after %d ms%n",
                    db, atMost.toMillis(), millis);
        } finally {
            unstick.countDown();
            pool.shutdownNow();
        }
    }

    /**
     * Regression (found by {@code baton check --strategy run-once --pool small}, pause fault): a runner paused after
     * the server executed its take, for longer than atMostFor, woke up and ran the task although its grant had
     * expired and another runner had run the task in the meantime — within that runner's atLeastFor. Here the
     * runner's take "returns" only after another client has run the task, on a grant that expired meanwhile; the
     * stale runner must not run it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aRunnerWhoseGrantExpiredBeforeTheTakeReturnedDoesNotRunTheTask(TxDatabase db) throws Exception {
        CountDownLatch resume = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        CountDownLatch paused = new CountDownLatch(1);
        JdbcLockClient a = db.client(pausingAfterUse(db.pool(2), armed, paused, resume));
        JdbcLockClient b = db.client(db.pool(2));
        String name = TxDatabase.unique("task-late");
        Duration atMost = Duration.ofMillis(300);
        AtomicInteger runsOfA = new AtomicInteger();
        AtomicInteger runsOfB = new AtomicInteger();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            armed.set(true); // the next connection a gives back (its take's) pauses the runner
            Future<Boolean> late = pool.submit(() -> a.runOnce(name, atMost, atMost, runsOfA::incrementAndGet));
            TxDatabase.await(paused);
            // a's grant ends atMostFor after its take; then b takes the name and runs the task
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> b.runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(20), runsOfB::incrementAndGet));
            resume.countDown();
            assertThat(late.get(10, TimeUnit.SECONDS)).as("runOnce of the runner whose grant expired").isFalse();
            assertThat(runsOfA).as("runs by the runner whose grant expired before its take returned").hasValue(0);
            assertThat(runsOfB).hasValue(1);
        } finally {
            resume.countDown();
            pool.shutdownNow();
        }
    }

    /** A data source whose connections, once armed, pause the caller in {@code close()} (after use) until resumed. */
    static javax.sql.DataSource pausingAfterUse(javax.sql.DataSource ds, java.util.concurrent.atomic.AtomicBoolean armed,
                                                CountDownLatch paused, CountDownLatch resume) {
        return (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(ScheduledRunIT.class.getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class}, (proxy, m, args) -> {
                    Object r = invoke(ds, m, args);
                    if (!m.getName().equals("getConnection")) {
                        return r;
                    }
                    java.sql.Connection c = (java.sql.Connection) r;
                    return java.lang.reflect.Proxy.newProxyInstance(ScheduledRunIT.class.getClassLoader(),
                            new Class<?>[] {java.sql.Connection.class}, (cp, cm, cargs) -> {
                                Object cr = invoke(c, cm, cargs);
                                if (cm.getName().equals("close") && armed.compareAndSet(true, false)) {
                                    paused.countDown();
                                    TxDatabase.await(resume);
                                }
                                return cr;
                            });
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    List<TxDatabase> autoCommitOff() {
        return databases().stream().filter(db -> db.toString().endsWith("-autocommit-off")).toList();
    }

    /**
     * Regression: on pools whose connections default to {@code autoCommit=false}, the take was rolled back when
     * its connection went back to the pool, so every racing client took the name and ran the task. Here each
     * run waits until every other client has given up, so the task can only finish if it ran exactly once.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("autoCommitOff")
    void runOnceRunsTheTaskExactlyOnceWhenClientsRaceOnPoolsWithAutoCommitOff(TxDatabase db) throws Exception {
        int clients = 4;
        List<JdbcLockClient> locks = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            locks.add(db.client(db.pool(2)));
        }
        String name = TxDatabase.unique("task-race");
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch gaveUp = new CountDownLatch(clients - 1);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (JdbcLockClient client : locks) {
                results.add(pool.submit(() -> {
                    TxDatabase.await(start);
                    boolean ran = client.runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(10), () -> {
                        runs.incrementAndGet();
                        try {
                            gaveUp.await(10, TimeUnit.SECONDS); // a second run keeps this from being reached
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    if (!ran) {
                        gaveUp.countDown();
                    }
                    return ran;
                }));
            }
            start.countDown();
            int ran = 0;
            for (Future<Boolean> f : results) {
                ran += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(runs.get()).as("runs of the task").isEqualTo(1);
            assertThat(ran).as("runOnce calls that returned true").isEqualTo(1);
            // and the grant persisted: the row is held for atLeastFor, so nobody runs it now either
            assertThat(locks.get(0).runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(10), runs::incrementAndGet))
                    .isFalse();
            assertThat(row(locks.get(1), name).held()).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aFailingTaskStillKeepsItsNameForAtLeastFor(TxDatabase db) {
        JdbcLockClient a = db.client(db.pool(2));
        String name = TxDatabase.unique("task-fails");
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> a.runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(10), () -> {
            throw boom;
        })).isSameAs(boom);
        assertThat(a.runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(10), () -> { })).isFalse();
        LockInfo info = row(a, name);
        assertThat(Duration.between(info.acquiredAt(), info.expiresAt())).isEqualTo(Duration.ofSeconds(10));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aNameHeldByTheLeaseStrategyIsNotRun(TxDatabase db) {
        JdbcLockClient a = db.client(db.pool(2));
        String name = TxDatabase.unique("task-held");
        try (Lease lease = a.lock(name).acquire(Duration.ofSeconds(5))) {
            assertThat(a.runOnce(name, Duration.ofSeconds(30), Duration.ofSeconds(1), () -> { })).isFalse();
        }
        assertThat(a.runOnce(name, Duration.ofSeconds(30), Duration.ofMillis(1), () -> { })).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void badArgumentsAreRefusedClearly(TxDatabase db) {
        JdbcLockClient a = db.client(db.pool(1));
        Runnable task = () -> { };
        Duration s = Duration.ofSeconds(1);
        assertThatThrownBy(() -> a.runOnce("t", Duration.ofSeconds(1), Duration.ofSeconds(2), task))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("atLeastFor (2000 ms) must not exceed atMostFor (1000 ms) for 't'");
        assertThatThrownBy(() -> a.runOnce("t", Duration.ZERO, s, task))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atMostFor must be at least 1 ms");
        assertThatThrownBy(() -> a.runOnce("t", s, Duration.ofMillis(-5), task))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atLeastFor must be at least 1 ms");
        assertThatThrownBy(() -> a.runOnce("t", null, s, task))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atMostFor must not be null");
        assertThatThrownBy(() -> a.runOnce("t", s, s, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("task must not be null");
        assertThatThrownBy(() -> a.runOnce("", s, s, task))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock name must not be empty");
        assertThatThrownBy(() -> a.runOnce(null, s, s, task))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock name must not be null");
    }
}
