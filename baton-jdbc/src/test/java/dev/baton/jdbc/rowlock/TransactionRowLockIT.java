package dev.baton.jdbc.rowlock;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockWaitTimeoutException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.TransactionWork;
import dev.baton.jdbc.fixtures.TxDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link JdbcLockClient#inTransaction}: the transaction row-lock strategy, on every database. */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransactionRowLockIT {
    private final List<TxDatabase> dbs = new ArrayList<>();

    List<TxDatabase> databases() {
        if (dbs.isEmpty()) {
            dbs.addAll(TxDatabase.all());
            for (TxDatabase db : dbs) {
                db.exec("CREATE TABLE IF NOT EXISTS tx_items (name VARCHAR(200) NOT NULL, item VARCHAR(200) NOT NULL)",
                        "CREATE TABLE IF NOT EXISTS tx_counter (name VARCHAR(200) NOT NULL PRIMARY KEY, n INTEGER NOT NULL)");
            }
        }
        return dbs;
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    private static void insertItem(Connection c, String name, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO tx_items (name, item) VALUES (?, ?)")) {
            ps.setString(1, name);
            ps.setString(2, item);
            ps.executeUpdate();
        }
    }

    private static int countItems(TxDatabase db, String name) throws SQLException {
        try (Connection c = db.raw("").getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM tx_items WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void theWorkCommitsWithTheLockAndSeesAValidLease(TxDatabase db) throws Exception {
        JdbcLockClient locks = db.client(db.pool(2));
        String name = TxDatabase.unique("tx-commit");
        AtomicReference<Lease> seen = new AtomicReference<>();
        String result = locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
            assertThat(lease.isValid()).isTrue();
            lease.checkValid();
            assertThat(lease.lockName()).isEqualTo(name);
            assertThat(lease.fencingToken()).isPositive();
            assertThat(lease.holderId()).startsWith(locks.clientId() + "#");
            assertThat(c.getAutoCommit()).isFalse();
            insertItem(c, name, "one");
            seen.set(lease);
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(countItems(db, name)).isEqualTo(1);
        assertThat(seen.get().isValid()).isFalse();
        long first = seen.get().fencingToken();
        // a zero wait on a name never used before creates its row too
        Long fresh = locks.inTransaction(TxDatabase.unique("tx-new"), Duration.ZERO, (c, lease) -> lease.fencingToken());
        assertThat(fresh).isPositive();
        long second = locks.inTransaction(name, Duration.ZERO, (c, lease) -> lease.fencingToken());
        assertThat(second).isGreaterThan(first);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void anExceptionRollsTheWorkBackAndIsRethrown(TxDatabase db) throws Exception {
        JdbcLockClient locks = db.client(db.pool(2));
        String name = TxDatabase.unique("tx-rollback");
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
            insertItem(c, name, "never");
            throw boom;
        })).isSameAs(boom);
        assertThatThrownBy(() -> locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
            insertItem(c, name, "never");
            try (Statement st = c.createStatement()) {
                st.execute("SELECT * FROM no_such_table_here");
            }
            return null;
        })).isInstanceOf(LockBackendException.class)
                .isNotInstanceOf(LockWaitTimeoutException.class)
                .hasMessageContaining("the work under '" + name + "'")
                .hasMessageContaining("rolled back")
                .hasCauseInstanceOf(SQLException.class);
        assertThat(countItems(db, name)).isZero();
        // the connection and the lock are fine afterwards
        Integer after = locks.inTransaction(name, Duration.ZERO, (c, lease) -> 7);
        assertThat(after).isEqualTo(7);
    }

    /** The driver's own connection type, which only the real connection implements. */
    private static Class<?> driverConnectionType(TxDatabase db) {
        return switch (db.dialect()) {
            case POSTGRESQL -> org.postgresql.PGConnection.class;
            case MARIADB, MYSQL -> org.mariadb.jdbc.Connection.class;
            case SQLITE -> org.sqlite.SQLiteConnection.class;
        };
    }

    /**
     * Regression: {@code unwrap(Connection.class)}, {@code Statement.getConnection()} and
     * {@code DatabaseMetaData.getConnection()} handed the work the real connection; a commit through it ended the
     * row lock while the lease stayed valid, and another client got the row lock while the work still ran.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void theWorkCannotReachTheRealConnectionSoNoOtherClientGetsTheLockWhileItRuns(TxDatabase db) {
        JdbcLockClient holder = db.client(db.pool(2));
        JdbcLockClient other = db.client(db.pool(2));
        String name = TxDatabase.unique("tx-escape");
        holder.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
            List<Connection> reached = new ArrayList<>();
            reached.add(c.unwrap(Connection.class));
            try (Statement st = c.createStatement()) {
                reached.add(st.getConnection());
                try (ResultSet rs = st.executeQuery("SELECT 1")) {
                    reached.add(rs.getStatement().getConnection());
                    assertThat(rs.getStatement()).isSameAs(st);
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT 1")) {
                reached.add(ps.getConnection());
                try (ResultSet rs = ps.executeQuery()) {
                    reached.add(rs.getStatement().getConnection());
                }
            }
            reached.add(c.getMetaData().getConnection());
            // every way the work might end the transaction behind the lock's back
            for (Connection r : reached) {
                for (String call : List.of("commit", "rollback", "setAutoCommit", "close")) {
                    try {
                        switch (call) {
                            case "commit" -> r.commit();
                            case "rollback" -> r.rollback();
                            case "setAutoCommit" -> r.setAutoCommit(true);
                            default -> r.close();
                        }
                        throw new AssertionError(call + "() passed on " + r);
                    } catch (SQLException refused) {
                        assertThat(refused.getMessage()).contains(call + "() is not allowed on the connection of");
                    }
                }
            }
            // the lock is still held: another client cannot get it while the work runs
            assertThatThrownBy(() -> other.inTransaction(name, Duration.ZERO, (c2, l2) -> null))
                    .isInstanceOf(LockWaitTimeoutException.class);
            assertThat(lease.isValid()).isTrue();
            assertThat(reached).allSatisfy(r -> assertThat(r).isSameAs(c));
            assertThat(c.isWrapperFor(driverConnectionType(db))).isFalse();
            assertThatThrownBy(() -> c.unwrap(driverConnectionType(db)))
                    .isInstanceOf(SQLException.class).hasMessageContaining("is not allowed");
            try (Statement st = c.createStatement()) {
                assertThatThrownBy(() -> st.unwrap(driverConnectionType(db)))
                        .isInstanceOf(SQLException.class).hasMessageContaining("is not allowed");
            }
            return null;
        });
        // and after the work, the next holder gets it
        long next = other.inTransaction(name, Duration.ofSeconds(5), (c2, l2) -> l2.fencingToken());
        assertThat(next).isPositive();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void theWorkCannotEndTheTransactionItself(TxDatabase db) {
        JdbcLockClient locks = db.client(db.pool(2));
        String name = TxDatabase.unique("tx-guard");
        AtomicReference<Connection> leaked = new AtomicReference<>();
        assertThatThrownBy(() -> locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
            leaked.set(c);
            c.commit();
            return null;
        })).isInstanceOf(LockBackendException.class).hasMessageContaining("commit() is not allowed");
        assertThatThrownBy(() -> leaked.get().createStatement())
                .isInstanceOf(SQLException.class).hasMessageContaining("has ended");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aWaiterTimesOutWithADistinctExceptionThenGetsTheLockWhenTheHolderCommits(TxDatabase db) throws Exception {
        JdbcLockClient holderClient = db.client(db.pool(2));
        JdbcLockClient waiterClient = db.client(db.pool(2));
        String name = TxDatabase.unique("tx-wait");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Long> holder = pool.submit(() -> holderClient.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
                held.countDown();
                TxDatabase.await(letGo);
                return lease.fencingToken();
            }));
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();

            long t0 = System.nanoTime();
            assertThatThrownBy(() -> waiterClient.inTransaction(name, Duration.ZERO, (c, lease) -> 0))
                    .isInstanceOf(LockWaitTimeoutException.class)
                    .hasMessageContaining("'" + name + "'");
            long zeroMillis = (System.nanoTime() - t0) / 1_000_000;

            Duration wait = Duration.ofMillis(300);
            t0 = System.nanoTime();
            LockWaitTimeoutException timeout = org.junit.jupiter.api.Assertions.assertThrows(LockWaitTimeoutException.class,
                            () -> waiterClient.inTransaction(name, wait, (c, lease) -> 0));
            long waitedMillis = (System.nanoTime() - t0) / 1_000_000;
            // MySQL and MariaDB count whole seconds: 300 ms becomes 1 s
            long bound = db.dialect() == Dialect.MARIADB || db.dialect() == Dialect.MYSQL ? 1000 : 300;
            assertThat(timeout.databaseBound()).isEqualTo(Duration.ofMillis(bound));
            assertThat(timeout.lockName()).isEqualTo(name);
            assertThat(waitedMillis).isBetween(bound - 50, bound + 1500);
            assertThat(zeroMillis).isLessThan(1000);
            System.out.printf("%s: NOWAIT refused in %d ms; a %d ms wait (database bound %d ms) ended after %d ms%n",
                    db, zeroMillis, wait.toMillis(), bound, waitedMillis);

            // the waiter's connections were healthy and are reused: the lock is had once the holder commits
            CountDownLatch waiting = new CountDownLatch(1);
            Future<Long> waiter = Executors.newSingleThreadExecutor().submit(() -> {
                waiting.countDown();
                return waiterClient.inTransaction(name, Duration.ofSeconds(10), (c, lease) -> lease.fencingToken());
            });
            assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
            letGo.countDown();
            long holderToken = holder.get(10, TimeUnit.SECONDS);
            assertThat(waiter.get(15, TimeUnit.SECONDS)).isGreaterThan(holderToken);
        } finally {
            letGo.countDown();
            pool.shutdownNow();
        }
    }

    /**
     * Four threads in two clients bump an unguarded counter row in the database 40 times: exact only if the
     * row lock excludes. Every fourth grant's work throws after noting its token, so its transaction rolls
     * back: tokens in grant order must still strictly increase (a rolled-back grant's token is never reused).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void holdersExcludeEachOtherAndTokensStrictlyIncreaseAcrossRollbacks(TxDatabase db) throws Exception {
        List<JdbcLockClient> clients = List.of(db.client(db.pool(3)), db.client(db.pool(3)));
        String name = TxDatabase.unique("tx-exclusion");
        db.exec("INSERT INTO tx_counter (name, n) VALUES ('" + name + "', 0)");
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        int threads = 4;
        int perThread = 10;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> futures = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            JdbcLockClient locks = clients.get(t % 2);
            futures.add(pool.submit(() -> {
                start.await();
                int committed = 0;
                for (int i = 0; i < perThread; i++) {
                    boolean fail = i % 4 == 3;
                    try {
                        locks.inTransaction(name, Duration.ofSeconds(20), (c, lease) -> {
                            tokens.add(lease.fencingToken());
                            int n;
                            try (PreparedStatement ps = c.prepareStatement("SELECT n FROM tx_counter WHERE name = ?")) {
                                ps.setString(1, name);
                                try (ResultSet rs = ps.executeQuery()) {
                                    rs.next();
                                    n = rs.getInt(1);
                                }
                            }
                            try (PreparedStatement ps = c.prepareStatement("UPDATE tx_counter SET n = ? WHERE name = ?")) {
                                ps.setInt(1, n + 1);
                                ps.setString(2, name);
                                ps.executeUpdate();
                            }
                            if (fail) {
                                throw new IllegalStateException("planned rollback");
                            }
                            return null;
                        });
                        committed++;
                    } catch (IllegalStateException expected) {
                        // rolled back
                    }
                }
                return committed;
            }));
        }
        start.countDown();
        int committed = 0;
        for (Future<Integer> f : futures) {
            committed += f.get(60, TimeUnit.SECONDS);
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        pool.shutdown();
        try (Connection c = db.raw("").getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT n FROM tx_counter WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(committed);
            }
        }
        assertThat(committed).isEqualTo(threads * (perThread - 2));
        assertThat(tokens).hasSize(threads * perThread);
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token of grant %d after %s", i, tokens.get(i - 1)).isGreaterThan(tokens.get(i - 1));
        }
        System.out.printf("%s: %d grants (%d rolled back) by 4 threads in 2 clients in %d ms%n",
                db, tokens.size(), tokens.size() - committed, millis);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void badArgumentsAreRefusedClearly(TxDatabase db) {
        JdbcLockClient locks = db.client(db.pool(1));
        TransactionWork<Object> work = (c, lease) -> null;
        assertThatThrownBy(() -> locks.inTransaction(null, Duration.ZERO, work))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock name must not be null");
        assertThatThrownBy(() -> locks.inTransaction("", Duration.ZERO, work))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock name must not be empty");
        assertThatThrownBy(() -> locks.inTransaction("x", null, work))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wait must not be null");
        assertThatThrownBy(() -> locks.inTransaction("x", Duration.ofMillis(-1), work))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wait must not be negative");
        assertThatThrownBy(() -> locks.inTransaction("x", Duration.ZERO, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("work must not be null");
        locks.close();
        assertThatThrownBy(() -> locks.inTransaction("x", Duration.ZERO, work))
                .isInstanceOf(dev.baton.LockException.class).hasMessageContaining("is closed")
                .isInstanceOf(dev.baton.LockClientClosedException.class);
    }
}
