package dev.baton.jdbc.optimistic;

import dev.baton.LockBackendException;
import dev.baton.OptimisticConflictException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.OptimisticLock;
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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link JdbcLockClient#optimistic}: the optimistic version strategy, on every database. */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OptimisticVersionIT {
    private final List<TxDatabase> dbs = new ArrayList<>();

    List<TxDatabase> databases() {
        if (dbs.isEmpty()) {
            dbs.addAll(TxDatabase.all());
            for (TxDatabase db : dbs) {
                db.exec("CREATE TABLE IF NOT EXISTS opt_docs (id VARCHAR(200) NOT NULL PRIMARY KEY, body "
                        + db.textType() + " NOT NULL)");
            }
        }
        return dbs;
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    private static String readBody(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT body FROM opt_docs WHERE id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static void writeBody(Connection c, String id, String body) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE opt_docs SET body = ? WHERE id = ?")) {
            ps.setString(1, body);
            ps.setString(2, id);
            ps.executeUpdate();
        }
    }

    /** The JSON array body {@code ["a","b"]} with {@code item} appended. */
    private static String append(String body, String item) {
        String inner = body.substring(1, body.length() - 1);
        return "[" + inner + (inner.isEmpty() ? "" : ",") + "\"" + item + "\"]";
    }

    private static List<String> items(String body) {
        String inner = body.substring(1, body.length() - 1);
        List<String> out = new ArrayList<>();
        if (!inner.isEmpty()) {
            for (String s : inner.split(",")) {
                out.add(s.substring(1, s.length() - 1));
            }
        }
        return out;
    }

    /**
     * Eight threads in two clients each append 8 items to one JSON array document by read-merge-write under the
     * optimistic version: every item must be there exactly once, and the version must have risen by exactly the
     * number of committed updates.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void concurrentReadMergeWritesLoseNoUpdate(TxDatabase db) throws Exception {
        List<JdbcLockClient> clients = List.of(db.client(db.pool(5)), db.client(db.pool(5)));
        String id = TxDatabase.unique("doc");
        db.exec("INSERT INTO opt_docs (id, body) VALUES ('" + id + "', '[]')");
        int threads = 8;
        int perThread = 8;
        AtomicInteger attempts = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            OptimisticLock doc = clients.get(t % 2).optimistic(id);
            int thread = t;
            futures.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < perThread; i++) {
                    String item = "t" + thread + "-" + i;
                    doc.update(1000, (c, version) -> {
                        attempts.incrementAndGet();
                        writeBody(c, id, append(readBody(c, id), item));
                        return null;
                    });
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        pool.shutdown();
        String body;
        try (Connection c = db.raw("").getConnection()) {
            body = readBody(c, id);
        }
        List<String> items = items(body);
        Set<String> expected = new HashSet<>();
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                expected.add("t" + t + "-" + i);
            }
        }
        assertThat(items).hasSize(threads * perThread);
        assertThat(new HashSet<>(items)).isEqualTo(expected);
        assertThat(clients.get(0).optimistic(id).version()).isEqualTo(1 + threads * perThread);
        System.out.printf("%s: %d read-merge-writes by 8 threads in 2 clients: %d attempts (%.2f per update) in %d ms%n",
                db, threads * perThread, attempts.get(), attempts.get() / (double) (threads * perThread), millis);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void afterMaxAttemptsAConflictCarriesTheAttemptsAndNothingIsWritten(TxDatabase db) throws Exception {
        JdbcLockClient locks = db.client(db.pool(3));
        String id = TxDatabase.unique("doc-conflict");
        db.exec("INSERT INTO opt_docs (id, body) VALUES ('" + id + "', '[]')");
        OptimisticLock doc = locks.optimistic(id);
        assertThat(doc.version()).isZero();
        AtomicInteger runs = new AtomicInteger();
        String versions = locks.tableName() + "_versions";
        OptimisticConflictException e = org.junit.jupiter.api.Assertions.assertThrows(OptimisticConflictException.class,
                () -> doc.update(3, (c, version) -> {
                    runs.incrementAndGet();
                    // a concurrent writer commits a new version on another connection after this attempt read
                    // (before this attempt writes: SQLite has one writer at a time)
                    db.exec("UPDATE " + versions + " SET version = version + 1 WHERE name = '" + id + "'");
                    writeBody(c, id, "[\"lost\"]");
                    return null;
                }));
        assertThat(e.attempts()).isEqualTo(3);
        assertThat(runs.get()).isEqualTo(3);
        assertThat(e.lockName()).isEqualTo(id);
        assertThat(e.lastVersion()).isEqualTo(3);
        assertThat(e.getMessage()).contains("'" + id + "'").contains("3 attempt(s)").contains("last version read 3");
        try (Connection c = db.raw("").getConnection()) {
            assertThat(readBody(c, id)).isEqualTo("[]");
        }
        assertThat(doc.version()).isEqualTo(4);
        // without interference, the next update wins at once
        Long seen = doc.update(1, (c, version) -> version);
        assertThat(seen).isEqualTo(4);
        assertThat(doc.version()).isEqualTo(5);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void anExceptionFromTheWorkRollsBackAndEndsTheUpdate(TxDatabase db) throws Exception {
        JdbcLockClient locks = db.client(db.pool(2));
        String id = TxDatabase.unique("doc-fail");
        db.exec("INSERT INTO opt_docs (id, body) VALUES ('" + id + "', '[]')");
        OptimisticLock doc = locks.optimistic(id);
        AtomicInteger runs = new AtomicInteger();
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> doc.update(5, (c, version) -> {
            runs.incrementAndGet();
            writeBody(c, id, "[\"never\"]");
            throw boom;
        })).isSameAs(boom);
        assertThatThrownBy(() -> doc.update(5, (c, version) -> {
            runs.incrementAndGet();
            writeBody(c, id, "[\"never\"]");
            readBody(c, "x' FROM nowhere --");
            try (PreparedStatement ps = c.prepareStatement("SELECT * FROM no_such_table_here")) {
                ps.executeQuery();
            }
            return null;
        })).isInstanceOf(LockBackendException.class).hasMessageContaining("'" + id + "'")
                .hasMessageContaining("rolled back").hasMessageContaining("attempt 1 of 5");
        assertThat(runs.get()).isEqualTo(2);
        try (Connection c = db.raw("").getConnection()) {
            assertThat(readBody(c, id)).isEqualTo("[]");
        }
        assertThat(doc.version()).isEqualTo(1);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void badArgumentsAreRefusedClearly(TxDatabase db) {
        JdbcLockClient locks = db.client(db.pool(1));
        assertThatThrownBy(() -> locks.optimistic(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock name must not be null");
        assertThatThrownBy(() -> locks.optimistic("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock name must not be empty");
        OptimisticLock doc = locks.optimistic("x");
        assertThatThrownBy(() -> doc.update(0, (c, v) -> null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAttempts must be at least 1, was 0");
        assertThatThrownBy(() -> doc.update(1, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("work must not be null");
    }
}
