package dev.baton.jdbc.lease;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.LockTimeoutException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.fixtures.ForwardingLockClient;
import dev.baton.jdbc.fixtures.JdbcFixture;
import dev.baton.jdbc.fixtures.MariaDbFixture;
import dev.baton.jdbc.fixtures.MySqlDialectOnMariaDbFixture;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.jdbc.fixtures.SqlRecordingDataSource;
import dev.baton.jdbc.fixtures.SqliteFixture;
import dev.baton.testkit.ClientConfig;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What only the JDBC lease table has: dialect detection, the DDL, table names, the purge.
 *
 * <p>Isolated: it runs on the contract fixtures' own tables and deletes their token counter rows (SQLite, the MySQL
 * dialect on MariaDB), which fails the grants of every other class on those tables meanwhile, and it looks for bell
 * waiters in MariaDB's whole process list, where other classes' waiters would show up too.
 */
@Isolated
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcLeaseTableIT {
    private final List<JdbcFixture> fixtures = new ArrayList<>();

    Stream<JdbcFixture> fixtures() {
        if (fixtures.isEmpty()) {
            fixtures.add(new PostgresFixture());
            fixtures.add(new MariaDbFixture());
            fixtures.add(new MySqlDialectOnMariaDbFixture());
            fixtures.add(new SqliteFixture());
        }
        return fixtures.stream();
    }

    @AfterAll
    void close() {
        fixtures.forEach(JdbcFixture::close);
    }

    private static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    private static PGSimpleDataSource postgres() {
        new PostgresFixture(); // fails loudly if the server is down
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(PostgresFixture.ADMIN_URL);
        return ds;
    }

    @Test
    void anUnknownDatabaseIsAnErrorAtBuild() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:unknown;DB_CLOSE_DELAY=-1");
        assertThatThrownBy(() -> JdbcLocks.builder(h2).createTableIfMissing().build())
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.UnsupportedBackendException.class)
                .hasMessageContaining("unsupported database 'H2'")
                .hasMessageContaining("PostgreSQL, MariaDB, MySQL and SQLite");
    }

    @Test
    void aDialectThatContradictsTheServerIsRefused() {
        assertThatThrownBy(() -> JdbcLocks.builder(postgres()).dialect(Dialect.MARIADB).build())
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.DialectMismatchException.class)
                .hasMessageContaining("dialect MARIADB was set but the database is POSTGRESQL");
    }

    @Test
    void aMissingTableIsAClearErrorNamingTheShippedDdl() {
        assertThatThrownBy(() -> JdbcLocks.builder(postgres()).tableName("baton_never_created").build())
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.MissingSchemaException.class)
                .hasMessageContaining("baton_never_created")
                .hasMessageContaining("/dev/baton/jdbc/schema/postgresql.sql")
                .hasMessageContaining("createTableIfMissing()");
    }

    /**
     * A schema made before the lease strategy's line of waiters existed (no {@code <table>_queue}) is refused at
     * {@code build()} naming the missing table, and {@code createTableIfMissing()} adds it.
     */
    @Test
    void aLeaseTableWithoutItsLineOfWaitersIsMissingSchemaNamingTheQueueTable() throws Exception {
        String table = "baton_noqueue";
        try (Connection admin = DriverManager.getConnection(PostgresFixture.ADMIN_URL)) {
            dropTables(admin, table);
            JdbcLocks.builder(postgres()).tableName(table).createTableIfMissing().build().close();
            try (Statement st = admin.createStatement()) {
                st.execute("DROP TABLE " + table + "_queue");
            }
            assertThatThrownBy(() -> JdbcLocks.builder(postgres()).tableName(table).build())
                    .isInstanceOf(dev.baton.MissingSchemaException.class)
                    .hasMessageContaining(table + "_queue")
                    .hasMessageContaining("/dev/baton/jdbc/schema/postgresql.sql");
            JdbcLocks.builder(postgres()).tableName(table).createTableIfMissing().build().close();
            JdbcLocks.builder(postgres()).tableName(table).build().close();
        } finally {
            try (Connection admin = DriverManager.getConnection(PostgresFixture.ADMIN_URL)) {
                dropTables(admin, table);
            }
        }
    }

    @Test
    void anUnreachableDatabaseIsABackendErrorAtBuild() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL("jdbc:postgresql://127.0.0.1:1/test?user=postgres&connectTimeout=2");
        assertThatThrownBy(() -> JdbcLocks.builder(ds).build())
                .isInstanceOf(dev.baton.LockBackendException.class)
                .hasMessageContaining("cannot connect");
    }

    /** A pool with the given defaults over a direct (unproxied) connection to the fixture's server. */
    private static com.zaxxer.hikari.HikariDataSource pool(String url, boolean autoCommit, String isolation) {
        com.zaxxer.hikari.HikariConfig hc = new com.zaxxer.hikari.HikariConfig();
        hc.setJdbcUrl(url);
        hc.setAutoCommit(autoCommit);
        if (isolation != null) {
            hc.setTransactionIsolation(isolation);
        }
        hc.setMaximumPoolSize(4);
        return new com.zaxxer.hikari.HikariDataSource(hc);
    }

    /** Regression: a pool defaulting to autoCommit=false rolled every grant back when the connection returned. */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {PostgresFixture.ADMIN_URL, MariaDbFixture.ADMIN_URL})
    void aPoolDefaultingToManualCommitStillCommitsGrantsAndReleases(String url) {
        String name = unique("manual-commit");
        try (var manual = pool(url, false, null); var normal = pool(url, true, null);
             JdbcLockClient a = JdbcLocks.builder(manual).createTableIfMissing().build();
             JdbcLockClient b = JdbcLocks.builder(normal).build()) {
            try (Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(b.lock(name).tryAcquire()).as("the grant was committed").isEmpty();
                assertThat(held.isValid()).isTrue();
            }
            assertThat(b.lock(name).tryAcquire()).as("the release was committed").isPresent().get()
                    .satisfies(Lease::close);
        }
    }

    /**
     * Regression (issue 13, found by {@code baton check --profile standard}, MariaDB × partition): a waiter's grant
     * and the removal of its ticket ran in one transaction, so a client cut off (or stalled) between the two kept the
     * lease row locked on the server; every other client's attempt on the lock then waited on that row lock — in
     * the checker, until its socket timed out ("Socket error", 08000) on a worker no fault had touched: the grant's
     * upsert reads the line inside a write, so InnoDB (REPEATABLE READ) keeps next-key locks on the line's index, and
     * a new ticket for the lock waits for them. Here the grantee stalls for 3 s before it removes its ticket; another
     * client's 300 ms wait (which takes a ticket) must time out after its 300 ms, not after the stall.
     */
    @Test
    void aGranteeStalledBeforeItRemovesItsTicketKeepsNoRowLockedForOthers() throws Exception {
        String name = unique("stalled-grant");
        long stallMillis = 3_000;
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        try (var direct = pool(MariaDbFixture.ADMIN_URL, true, null); var other = pool(MariaDbFixture.ADMIN_URL, true, null)) {
            javax.sql.DataSource stalling = stallingBefore(direct, "DELETE FROM baton_locks_queue", armed, stallMillis);
            ExecutorService pool = Executors.newFixedThreadPool(1);
            try (JdbcLockClient holder = JdbcLocks.builder(other).createTableIfMissing().build();
                 JdbcLockClient grantee = JdbcLocks.builder(stalling).build();
                 JdbcLockClient third = JdbcLocks.builder(other).build()) {
                Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
                Future<Lease> waiting = pool.submit(() -> grantee.lock(name).acquire(Duration.ofSeconds(30)));
                await().atMost(Duration.ofSeconds(10)).until(() -> ticketsOn(other, name) == 1);
                armed.set(true); // the grantee's next removal of its ticket stalls
                held.close();
                await().atMost(Duration.ofSeconds(10)).until(() -> stalledSince.get() != 0);
                long asked = System.nanoTime();
                assertThatThrownBy(() -> third.lock(name).acquire(Duration.ofMillis(300)))
                        .as("the lock went to the waiter in line").isInstanceOf(dev.baton.LockTimeoutException.class);
                long answered = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
                assertThat(answered).as("a 300 ms wait (which takes a place in line) while the grantee stalls %d ms"
                        + " after its grant", stallMillis).isLessThan(stallMillis / 2);
                waiting.get(30, TimeUnit.SECONDS).close();
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** When the stalling data source's statement began its stall (nanoTime), or 0. */
    private final java.util.concurrent.atomic.AtomicLong stalledSince = new java.util.concurrent.atomic.AtomicLong();

    /**
     * {@code raw}, except that while {@code armed}, the first statement whose SQL starts with {@code prefix} waits
     * {@code millis} before it is prepared (then disarms).
     */
    private javax.sql.DataSource stallingBefore(javax.sql.DataSource raw, String prefix,
                                                java.util.concurrent.atomic.AtomicBoolean armed, long millis) {
        return (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class}, (p, m, args) -> {
                    Object result = invoke(raw, m, args);
                    if (!m.getName().equals("getConnection")) {
                        return result;
                    }
                    Connection c = (Connection) result;
                    return java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                            new Class<?>[] {Connection.class}, (cp, cm, cargs) -> {
                                if (cm.getName().equals("prepareStatement") && cargs[0] instanceof String sql
                                        && sql.startsWith(prefix) && armed.compareAndSet(true, false)) {
                                    stalledSince.set(System.nanoTime());
                                    Thread.sleep(millis);
                                }
                                return invoke(c, cm, cargs);
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

    private static int ticketsOn(javax.sql.DataSource ds, String name) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM baton_locks_queue WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /**
     * On a connection that reaches PostgreSQL directly the lease strategy's statements are prepared by name (the
     * driver's cache, after {@code prepareThreshold} uses), so the server stops parsing and planning the grant on
     * every call; through a pooler they stay one-shot ({@code PgBouncerIT}). Seen on the one pooled connection the client's statements use.
     */
    @Test
    void onADirectPostgresConnectionTheGrantIsPreparedOnceNotPlannedOnEveryCall() throws SQLException {
        String name = unique("prepared");
        com.zaxxer.hikari.HikariConfig hc = new com.zaxxer.hikari.HikariConfig();
        hc.setJdbcUrl(PostgresFixture.ADMIN_URL);
        hc.setMaximumPoolSize(2); // one for the client's LISTEN, one for its statements
        try (var two = new com.zaxxer.hikari.HikariDataSource(hc);
             JdbcLockClient locks = JdbcLocks.builder(two).createTableIfMissing().build()) {
            for (int i = 0; i < 10; i++) {
                locks.lock(name).acquire(Duration.ofSeconds(5)).close();
            }
            try (Connection c = two.getConnection(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_prepared_statements"
                         + " WHERE statement LIKE 'WITH granted AS%' AND NOT from_sql")) {
                rs.next();
                assertThat(rs.getInt(1)).as("named prepared grant statements on the session the client's statements"
                        + " used").isEqualTo(1);
            }
        }
    }

    /**
     * An uncontended acquire and release cost two statements, the grant and the release, on the servers whose
     * grant is one statement: no read-only look first (the grant checks the row and the line itself). Counted on
     * the statements that name the lease table (the PostgreSQL listener's probe does not).
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {PostgresFixture.ADMIN_URL, MariaDbFixture.ADMIN_URL})
    void anUncontendedAcquireAndReleaseSendTwoStatements(String url) {
        String name = unique("two-statements");
        try (var pool = pool(url, true, null)) {
            SqlRecordingDataSource recorded = new SqlRecordingDataSource(pool);
            try (JdbcLockClient locks = JdbcLocks.builder(recorded).tableName("baton_two").createTableIfMissing()
                    .build()) {
                locks.lock(name).acquire(Duration.ofSeconds(5)).close(); // the statements are prepared once
                int before = recorded.sql().size();
                locks.lock(name).acquire(Duration.ofSeconds(5)).close();
                List<String> all = recorded.sql(); // one copy: the listener's probe may add to it meanwhile
                List<String> sent = all.subList(before, all.size()).stream()
                        .filter(sql -> sql.contains("baton_two")).toList();
                assertThat(sent).as("statements of one uncontended acquire and release").hasSize(2);
            }
        }
    }

    /**
     * An uncontended acquire and release read the line of waiters once, in the grant, and delete no ticket: a first
     * attempt is not in line, so it has no ticket of its own to look past or to remove. Regression: on PostgreSQL and
     * SQLite the grant read the line twice (once to propose a missing row, once to update a free one, on one snapshot)
     * and deleted the caller's ticket that it never took. Counted on the SQL sent (the references to
     * {@code <table>_queue}; PostgreSQL's release reads the line once more, to name its head in a notice), with the
     * statements that name the lease's tables: PostgreSQL and MariaDB the grant and the release; SQLite the token
     * drawn and read, the grant and the release.
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource({"postgresql, 2, 2", "mariadb, 1, 2", "sqlite, 1, 4"})
    void anUncontendedAcquireAndReleaseReadTheLineOnceAndDeleteNoTicket(String db, int lineReads, int statements) {
        String name = unique("line-once");
        String table = "baton_line_once";
        com.zaxxer.hikari.HikariConfig hc = new com.zaxxer.hikari.HikariConfig();
        switch (db) {
            case "postgresql" -> hc.setJdbcUrl(PostgresFixture.ADMIN_URL);
            case "mariadb" -> hc.setJdbcUrl(MariaDbFixture.ADMIN_URL);
            default -> {
                new SqliteFixture(); // creates the file's directory
                hc.setDataSource(SqliteFixture.dataSource(SqliteFixture.FILE));
            }
        }
        hc.setMaximumPoolSize(4);
        try (var pool = new com.zaxxer.hikari.HikariDataSource(hc)) {
            SqlRecordingDataSource recorded = new SqlRecordingDataSource(pool);
            try (JdbcLockClient locks = JdbcLocks.builder(recorded).tableName(table).createTableIfMissing().build()) {
                locks.lock(name).acquire(Duration.ofSeconds(5)).close(); // the row exists from now on
                int before = recorded.sql().size();
                locks.lock(name).acquire(Duration.ofSeconds(5)).close();
                List<String> all = recorded.sql(); // one copy: the listener's probe may add to it meanwhile
                List<String> sent = all.subList(before, all.size()).stream().filter(sql -> sql.contains(table))
                        .toList();
                String queue = table + "_queue";
                int reads = sent.stream().mapToInt(sql -> sql.split(queue, -1).length - 1).sum();
                assertThat(sent).as("statements of one uncontended acquire and release").hasSize(statements)
                        .noneMatch(sql -> sql.startsWith("DELETE FROM " + queue));
                assertThat(reads).as("references to the line in " + sent).isEqualTo(lineReads);
            }
        }
    }

    /**
     * PostgreSQL: a release with nobody in line sends no {@code NOTIFY} (a notice makes the release's commit take
     * the server's notification lock and wakes every listening session). Checked on a plain LISTEN session: a
     * sentinel notice sent after the release arrives with nothing of the lock's before it.
     */
    @Test
    void aPostgresReleaseWithNobodyInLineSendsNoNotice() throws Exception {
        String name = unique("no-notice");
        String sentinel = unique("sentinel");
        try (Connection listen = DriverManager.getConnection(PostgresFixture.ADMIN_URL);
             JdbcLockClient locks = JdbcLocks.builder(postgres()).tableName("baton_quiet").createTableIfMissing()
                     .build()) {
            try (Statement st = listen.createStatement()) {
                st.execute("LISTEN baton_quiet_released");
            }
            locks.lock(name).acquire(Duration.ofSeconds(5)).close();
            try (Statement st = listen.createStatement()) {
                st.execute("SELECT pg_notify('baton_quiet_released', '" + sentinel + "')");
            }
            List<String> notices = new ArrayList<>();
            org.postgresql.PGConnection pg = listen.unwrap(org.postgresql.PGConnection.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                org.postgresql.PGNotification[] got = pg.getNotifications(100);
                if (got != null) {
                    for (org.postgresql.PGNotification n : got) {
                        notices.add(n.getParameter());
                    }
                }
                return notices.contains(sentinel);
            });
            assertThat(notices).as("notices before the sentinel (delivered in commit order)")
                    .noneMatch(n -> n.endsWith(name));
        }
    }

    /** A PostgreSQL client with a 60 s lease on {@code table} (created if missing): the holder of the two tests below. */
    private static JdbcLockClient holderClient(String table) {
        return JdbcLocks.builder(postgres()).tableName(table).createTableIfMissing().leaseTime(Duration.ofSeconds(60))
                .build();
    }

    /**
     * A client over {@code dataSource} on {@code table} whose waiters poll only every 30 s (its first park is at
     * least 15 s), so that within a test's few seconds nothing but a notice or its own next look can grant them.
     */
    private static JdbcLockClient slowPollingWaiter(javax.sql.DataSource dataSource, String table) {
        return JdbcLocks.builder(dataSource).tableName(table).leaseTime(Duration.ofSeconds(60))
                .minPollInterval(Duration.ofSeconds(30)).maxPollInterval(Duration.ofSeconds(30)).build();
    }

    /** A test on a PostgreSQL lock held by one client and waited for by another ({@link #slowPollingWaiter}). */
    private interface HeldAndWaitedFor {
        void run(Lease held, JdbcLockClient waiterClient, SqlRecordingDataSource recorded) throws Exception;
    }

    /**
     * Runs {@code test} with lock {@code name} in {@code table} held by a client of its own, and a slow-polling
     * waiter client whose statements are recorded.
     */
    private static void withAPostgresHolderAndASlowWaiter(String table, String name, HeldAndWaitedFor test)
            throws Exception {
        try (var pool = pool(PostgresFixture.ADMIN_URL, true, null)) {
            SqlRecordingDataSource recorded = new SqlRecordingDataSource(pool);
            try (JdbcLockClient holderClient = holderClient(table);
                 JdbcLockClient waiterClient = slowPollingWaiter(recorded, table)) {
                test.run(holderClient.lock(name).acquire(Duration.ofSeconds(5)), waiterClient, recorded);
            }
        }
    }

    /**
     * PostgreSQL: a waiter whose release came after its attempt found the lock held but before its ticket was in
     * line was named by no notice (the line was empty at the release); it looks once more after taking its place
     * and takes the free lock then, instead of sleeping to its next poll. Forced: the holder's release runs exactly
     * before the waiter's ticket insert; the waiter's first park is at least 15 s (its poll interval is 30 s), so
     * only that look can grant within 5 s.
     */
    @Test
    void aPostgresWaiterWhoseTicketCameAfterTheReleaseTakesTheLockAtOnce() throws Exception {
        String name = unique("late-ticket");
        withAPostgresHolderAndASlowWaiter("baton_late", name, (held, waiterClient, hooked) -> {
            hooked.before("INSERT INTO baton_late_queue", held::close);
            long start = System.nanoTime();
            try (Lease got = waiterClient.lock(name).acquire(Duration.ofSeconds(25))) {
                assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.printf("[postgresql] late ticket: granted after %d ms%n", ms);
            assertThat(held.isValid()).as("the hook released the holder before the ticket").isFalse();
            // without the second look the waiter parks 15-25 s (half its 30 s poll and more, or the time left)
            assertThat(ms).as("granted by the look after the ticket, not by a poll").isLessThan(5_000);
        });
    }

    /**
     * PostgreSQL: a waiter whose client found the lock held lately takes its place in line before it looks (in line
     * one statement sooner; the look after the ticket sees a release that came before it, which named nobody), and
     * sends no second look; its first acquisition, which went straight to the grant, still takes its place after.
     */
    @Test
    void aContendedPostgresWaiterTakesItsPlaceBeforeItLooks() throws Exception {
        String name = unique("place-first");
        withAPostgresHolderAndASlowWaiter("baton_first", name, (held, waiterClient, recorded) -> {
            int first = recorded.sql().size();
            assertThatThrownBy(() -> waiterClient.lock(name).acquire(Duration.ofMillis(200)))
                    .isInstanceOf(LockTimeoutException.class);
            int second = recorded.sql().size();
            assertThatThrownBy(() -> waiterClient.lock(name).acquire(Duration.ofMillis(200)))
                    .isInstanceOf(LockTimeoutException.class);
            java.util.function.BiFunction<Integer, Integer, List<String>> sent = (from, to) -> recorded.sql()
                    .subList(from, to).stream().filter(sql -> sql.contains("baton_first"))
                    .map(sql -> sql.substring(0, Math.min(sql.length(), 30))).toList();
            assertThat(sent.apply(first, second)).as("the first acquisition").startsWith("WITH granted AS ( INSERT INTO ",
                    "INSERT INTO baton_first_queue ", "SELECT l.owner, l.token, ceil(");
            // (the second: its place, its look, its park to the timeout, one more look, and its withdrawal)
            assertThat(sent.apply(second, recorded.sql().size())).as("the second, within a second of the first")
                    .startsWith("INSERT INTO baton_first_queue ", "SELECT l.owner, l.token, ceil(")
                    .doesNotContain("WITH granted AS ( INSERT INTO ");
            held.close();
        });
    }

    /**
     * PostgreSQL: the waiter that a release's notice names as the head of the line grants itself at once, without
     * looking first: its whole acquisition is the first grant (held), its ticket, the look after the ticket, and the
     * grant after the notice (a look before that grant without the shortcut). The waiter's polls are 30 s apart, so
     * nothing but the notice wakes it.
     */
    @Test
    void aPostgresWaiterNamedByTheReleaseGrantsItselfWithoutALook() throws Exception {
        String name = unique("named-head");
        withAPostgresHolderAndASlowWaiter("baton_named", name, (held, waiterClient, recorded) -> {
            int before = recorded.sql().size();
            ExecutorService one = Executors.newSingleThreadExecutor();
            try {
                Future<Long> waiter = one.submit(() -> {
                    try (Lease got = waiterClient.lock(name).acquire(Duration.ofSeconds(25))) {
                        return got.fencingToken();
                    }
                });
                // the attempt, the ticket and the look after it have run (a statement is recorded when it is
                // prepared: the count must stay at 3 a while), so the release finds the waiter parked in line
                java.util.function.Supplier<Long> sentSoFar = () -> {
                    List<String> all = recorded.sql();
                    return all.subList(before, all.size()).stream().filter(sql -> sql.contains("baton_named"))
                            .count();
                };
                await().atMost(Duration.ofSeconds(10)).during(Duration.ofMillis(300))
                        .until(() -> sentSoFar.get() == 3);
                held.close();
                assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            } finally {
                one.shutdownNow();
            }
            List<String> all = recorded.sql();
            List<String> sent = all.subList(before, all.size()).stream()
                    .filter(sql -> sql.contains("baton_named")).toList();
            assertThat(sent.stream().map(sql -> sql.substring(0, Math.min(sql.length(), 30))).toList())
                    .as("the waiter's statements, its release included").containsExactly(
                            "WITH granted AS ( INSERT INTO ", // the first attempt: held
                            "INSERT INTO baton_named_queue ", // its ticket
                            "SELECT l.owner, l.token, ceil(", // the look after the ticket
                            "WITH granted AS ( INSERT INTO ", // woken by the notice: the grant, no look
                            "WITH released AS ( UPDATE bato"); // the release
        });
    }

    /** The bells of the places in the line of {@code name} in table {@code baton_bell}, in line order. */
    private static List<String> ticketBells(Connection admin, String name) throws SQLException {
        List<String> bells = new ArrayList<>();
        try (PreparedStatement ps = admin.prepareStatement("SELECT owner, TIMESTAMPDIFF(MICROSECOND, '1970-01-01',"
                + " enqueued_at) FROM baton_bell_queue WHERE name = ? ORDER BY enqueued_at, owner")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    bells.add(new dev.baton.jdbc.internal.SessionKeys("baton_bell")
                            .myTicketBellKey(name, rs.getString(1), rs.getLong(2)));
                }
            }
        }
        return bells;
    }

    /** The connection that holds the named lock {@code bell}, or null if nobody does. */
    private static Long bellUsedBy(Connection admin, String bell) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            ps.setString(1, bell);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long id = rs.getLong(1);
                return rs.wasNull() ? null : id;
            }
        }
    }

    /** Whether a connection is blocked in a wait ({@code GET_LOCK}) on {@code bell} right now (MariaDB). */
    private static boolean blockedOnBell(Connection admin, String bell) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT COUNT(*) FROM information_schema.PROCESSLIST"
                + " WHERE STATE = 'User lock' AND INFO LIKE 'SELECT IF(GET_LOCK(%' AND INSTR(INFO, ?) > 0")) {
            ps.setString(1, bell);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    /** The connection that holds the bell of {@code name} in {@code table} (MariaDB), or null if nobody does. */
    private static Long bellHolder(Connection admin, String table, String name) throws SQLException {
        return bellUsedBy(admin, new dev.baton.jdbc.internal.SessionKeys(table).myBellKey(name));
    }

    /**
     * MariaDB: a holder granted a contended lock keeps its bell, and the head of the line waits for the bell on the
     * server instead of looking again and again: while the holder keeps the lock for 2 s the head sends a look only
     * per wait slice (500 ms), where the line-paced poll looked about a hundred times; rung by the release, it goes
     * straight to the grant (and removes its ticket), no look in between. The holder is made a contended grantee
     * first: the waiter's client holds the lock while the holder waits in line.
     */
    @Test
    void aMariaDbHeadOfTheLineWaitsOnTheHoldersBellInsteadOfLooking() throws Exception {
        String name = unique("bell");
        onAContendedBell(name, (held, waiterClient, recorded, admin, two) -> {
            int before = recorded.sql().size();
            Future<Long> waiter = two.submit(() -> {
                try (Lease got = waiterClient.lock(name).acquire(Duration.ofSeconds(20))) {
                    return got.fencingToken();
                }
            });
            Thread.sleep(2_000); // the holder keeps the lock while its waiter waits
            // then it releases while the head is blocked in a wait on its bell that has just begun: a release that
            // lands between two of the head's 500 ms waits finds it looking, as it should, and tests nothing here
            java.util.concurrent.CountDownLatch nextWait = new java.util.concurrent.CountDownLatch(1);
            recorded.recordAnswers("IF(GET_LOCK");
            recorded.before("IF(GET_LOCK", nextWait::countDown);
            assertThat(nextWait.await(5, TimeUnit.SECONDS)).as("the head waits on a bell again").isTrue();
            String bell = new dev.baton.jdbc.internal.SessionKeys("baton_bell").myBellKey(name);
            await("the head blocked on the holder's bell").atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(2)).until(() -> blockedOnBell(admin, bell));
            held.close();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            assertThat(recorded.answers()).as("the head's last wait (1: rung; 0: still kept when its slice ended)")
                    .last().isEqualTo(1);
            List<String> all = recorded.sql();
            List<String> full = all.subList(before, all.size());
            List<String> sent = full.stream().map(sql -> sql.substring(0, Math.min(sql.length(), 40))).toList();
            long looks = sent.stream().filter(sql -> sql.startsWith("SELECT l.owner")).count();
            // (the waiter's own bell, armed by its contended grant and let go by its release, is sent by
            // another thread: only the waits and the statements on the tables count here)
            long waits = sent.stream().filter(sql -> sql.contains("IF(GET_LOCK")).count();
            assertThat(looks).as("looks during a 2 s hold (statements: %s)", sent).isBetween(1L, 8L);
            assertThat(waits).as("waits for the bell").isBetween(1L, 8L);
            int lastWait = 0;
            for (int i = 0; i < sent.size(); i++) {
                if (sent.get(i).contains("IF(GET_LOCK")) {
                    lastWait = i;
                }
            }
            assertGrantAndRelease(full.subList(lastWait + 1, full.size()), "after the bell: the grant and the removal"
                    + " of the ticket, then the release (a look there would mean the release did not ring)");
        });
    }

    /** The statements on table {@code baton_bell} in {@code sent} are a grant, its ticket's removal and a release. */
    private static void assertGrantAndRelease(List<String> sent, String why) {
        assertThat(sent.stream().filter(sql -> sql.contains("baton_bell"))
                .map(sql -> sql.substring(0, Math.min(sql.length(), 40))).toList())
                .as(why)
                .satisfiesExactly(
                        grant -> assertThat(grant).startsWith("UPDATE baton_bell SET token = LAST_INSER"),
                        ticket -> assertThat(ticket).startsWith("DELETE FROM baton_bell_queue"),
                        release -> assertThat(release).startsWith("INSERT INTO baton_bell_released"));
    }

    /**
     * Regression (issue 13, seen in the benchmark as a poll in most MariaDB hand-overs): a holder that releases
     * before the head of the line comes to its bell has let the bell go, so the head's wait finds nobody keeping it.
     * The head took that as "the holder keeps no bell" and parked until the line-paced poll, then looked, then
     * granted; it now goes to the grant at once, which tells whether the lock is free. Forced: the holder releases,
     * and its bell is let go, just before the head's wait statement.
     */
    @Test
    void aMariaDbHeadThatComesToTheHoldersBellAfterTheReleaseGoesStraightToTheGrant() throws Exception {
        String name = unique("late-bell");
        onAContendedBell(name, (held, waiterClient, recorded, admin, two) -> {
            int before = recorded.sql().size();
            recorded.before("IF(GET_LOCK", () -> {
                held.close();
                await("the holder's bell is let go").atMost(Duration.ofSeconds(10))
                        .until(() -> bellHolder(admin, "baton_bell", name) == null);
            });
            try (Lease got = waiterClient.lock(name).acquire(Duration.ofSeconds(20))) {
                assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
            }
            assertThat(held.isValid()).as("the hook released the holder before the wait").isFalse();
            List<String> full = recorded.sqlFrom(before);
            int wait = -1;
            for (int i = 0; i < full.size(); i++) {
                if (full.get(i).contains("IF(GET_LOCK")) {
                    wait = i;
                    break;
                }
            }
            assertThat(wait).as("the head waited on a bell (statements: %s)", full).isNotNegative();
            assertGrantAndRelease(full.subList(wait + 1, full.size()),
                    "after the wait that found no bell: the grant, not a poll and a look");
        });
    }

    /**
     * MariaDB: a head behind a holder that keeps no bell (its grant was uncontended) tries the grant once when it
     * finds no bell, and then polls without it for the rest of that grant, where each poll would have cost a losing
     * grant (three statements) besides its look (found by a second reading).
     */
    @Test
    void aMariaDbHeadBehindAHolderWithoutABellTriesTheGrantOncePerGrant() throws Exception {
        String name = unique("no-bell");
        onTwoBellClients((holderClient, waiterClient, recorded, admin, two) -> {
            Lease held = holderClient.lock(name).acquire(Duration.ofSeconds(5)); // uncontended: no bell
            Future<Long> waiter = two.submit(() -> {
                try (Lease got = waiterClient.lock(name).acquire(Duration.ofSeconds(20))) {
                    return got.fencingToken();
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> ticketsIn(admin, "baton_bell", name) == 1);
            // the head polls behind the holder: five looks (however long a busy machine takes for them)
            await().atMost(Duration.ofSeconds(15)).until(() ->
                    recorded.sql().stream().filter(sql -> sql.startsWith("SELECT l.owner")).count() >= 5);
            assertThat(bellHolder(admin, "baton_bell", name)).as("the holder keeps no bell").isNull();
            long grants = recorded.sql().stream().filter(sql -> sql.startsWith("UPDATE baton_bell SET token")).count();
            long looks = recorded.sql().stream().filter(sql -> sql.startsWith("SELECT l.owner")).count();
            held.close();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            // the first attempt's grant, and the one after the first wait that found no bell
            assertThat(grants).as("grants tried while the holder held (looks: %d)", looks).isLessThanOrEqualTo(2);
        });
    }

    /**
     * MariaDB: the bell is only a wake-up. A holder's bell connection killed on the server lets the bell go, which
     * wakes the head of the line; its grant finds the lock still held (the lease row decides, not the bell), so it
     * waits on without an error, and takes the lock when the holder releases it.
     */
    @Test
    void aKilledBellConnectionWakesTheHeadButNeverGrantsIt() throws Exception {
        String name = unique("killed-bell");
        onAContendedBell(name, (held, waiterClient, recorded, admin, two) -> {
            Future<Long> waiter = two.submit(() -> {
                try (Lease got = waiterClient.lock(name).acquire(Duration.ofSeconds(20))) {
                    return got.fencingToken();
                }
            });
            await("the head waits on the holder's bell").atMost(Duration.ofSeconds(10))
                    .until(() -> waitingOnABell(admin));
            java.util.function.Supplier<Long> grants = () -> recorded.sql().stream()
                    .filter(sql -> sql.startsWith("UPDATE baton_bell SET token")).count();
            long grantsBefore = grants.get();
            try (Statement st = admin.createStatement()) {
                st.execute("KILL " + bellHolder(admin, "baton_bell", name));
            }
            await("the head, rung by the kill, tries the grant").atMost(Duration.ofSeconds(10))
                    .until(() -> grants.get() > grantsBefore);
            Thread.sleep(200); // its refused grant has answered; it waits on
            assertThat(waiter).as("the head is not granted a lock that is held").isNotDone();
            assertThat(held.isValid()).isTrue();
            held.close();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
        });
    }

    /**
     * Regression (issue 13, seen in the benchmark as a 520 ms longest wait on MariaDB, 42× the median): a waiter's
     * bell was named by the waiter alone, so a waiter that was granted, let go and took a new place behind the one
     * that had been behind it kept the very bell that one was about to wait on — which then waited out its whole
     * 500 ms slice as head of a free lock. A place's bell is now named by when the place was taken. Forced: just
     * before the successor's wait statement, its predecessor is granted, releases, and takes a new place behind it.
     * Then the successor's wait on the bell of the place ahead must find nobody keeping it (its statement answers
     * 2 at once), not a bell kept until the slice ends (0): the mechanism, read from the statement's answer, not a
     * time, so a slow machine cannot make it pass or fail.
     */
    @Test
    void aWaiterIsNotHeldByTheBellOfANewPlaceItsPredecessorTookBehindIt() throws Exception {
        String name = unique("new-place");
        try (var holderPool = pool(MariaDbFixture.ADMIN_URL, true, null);
             var predecessorPool = pool(MariaDbFixture.ADMIN_URL, true, null);
             var successorPool = pool(MariaDbFixture.ADMIN_URL, true, null);
             Connection admin = DriverManager.getConnection(MariaDbFixture.ADMIN_URL)) {
            SqlRecordingDataSource recorded = new SqlRecordingDataSource(successorPool);
            try (JdbcLockClient holderClient = bellClient(holderPool);
                 JdbcLockClient predecessorClient = bellClient(predecessorPool);
                 JdbcLockClient successorClient = bellClient(recorded)) {
                // one thread: the predecessor's second place is the same owner's (a waiter is its client and thread)
                ExecutorService threads = Executors.newSingleThreadExecutor();
                try {
                    Lease held = holderClient.lock(name).acquire(Duration.ofSeconds(5));
                    Future<Lease> predecessor = threads.submit(() ->
                            predecessorClient.lock(name).acquire(Duration.ofSeconds(20)));
                    await().atMost(Duration.ofSeconds(10)).until(() -> ticketsIn(admin, "baton_bell", name) == 1);
                    String oldBell = ticketBells(admin, name).get(0);
                    java.util.concurrent.atomic.AtomicLong movedAt = new java.util.concurrent.atomic.AtomicLong();
                    java.util.concurrent.atomic.AtomicReference<Future<Lease>> again =
                            new java.util.concurrent.atomic.AtomicReference<>();
                    recorded.recordAnswers("IF(GET_LOCK");
                    recorded.before("IF(GET_LOCK", () -> {
                        try {
                            held.close();
                            Lease first = predecessor.get(10, TimeUnit.SECONDS);
                            threads.submit(first::close).get(10, TimeUnit.SECONDS); // (a lease is closed by its thread)
                            again.set(threads.submit(() -> predecessorClient.lock(name).acquire(Duration.ofSeconds(20))));
                            await().atMost(Duration.ofSeconds(10)).until(() -> ticketsIn(admin, "baton_bell", name) == 2);
                            String newBell = ticketBells(admin, name).get(1); // the line: the successor, then it
                            await("the predecessor's new place keeps its bell").atMost(Duration.ofSeconds(10))
                                    .until(() -> bellUsedBy(admin, newBell) != null);
                            assertThat(newBell).isNotEqualTo(oldBell);
                            assertThat(bellUsedBy(admin, oldBell)).as("the old place's bell, let go").isNull();
                            movedAt.set(System.nanoTime());
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    try (Lease got = successorClient.lock(name).acquire(Duration.ofSeconds(20))) {
                        assertThat(movedAt.get()).as("the hook ran before the successor's wait").isNotZero();
                        // held by its predecessor's new bell, its wait would answer 0 after its 500 ms slice
                        assertThat(recorded.answers()).as("the successor's waits on a bell (2: nobody kept the bell"
                                + " waited on; 1: rung; 0: still kept when the slice ended)")
                                .startsWith(2).doesNotContain(0);
                    }
                    Lease second = again.get().get(10, TimeUnit.SECONDS);
                    threads.submit(second::close).get(10, TimeUnit.SECONDS);
                } finally {
                    threads.shutdownNow();
                }
            }
        }
    }

    /**
     * MariaDB: a waiter whose ticket vanished (purged after it expired, or a server restart emptied the MEMORY line)
     * takes a new place at its next refresh, and its bell moves with it: the bell of the old place is let go and the
     * new place's is kept, so the waiter behind finds it (found by a second reading: the old place's bell stayed).
     */
    @Test
    void aWaiterWhoseTicketVanishedKeepsTheBellOfItsNewPlace() throws Exception {
        String name = unique("vanished");
        try (var holderPool = pool(MariaDbFixture.ADMIN_URL, true, null);
             var waiterPool = pool(MariaDbFixture.ADMIN_URL, true, null);
             Connection admin = DriverManager.getConnection(MariaDbFixture.ADMIN_URL);
             JdbcLockClient holderClient = bellClient(holderPool);
             // a 2 s lease: the waiter refreshes its ticket every second
             JdbcLockClient waiterClient = JdbcLocks.builder(waiterPool).tableName("baton_bell")
                     .leaseTime(Duration.ofSeconds(2)).build()) {
            ExecutorService one = Executors.newSingleThreadExecutor();
            try {
                Lease held = holderClient.lock(name).acquire(Duration.ofSeconds(5));
                Future<?> waiter = one.submit(() -> {
                    waiterClient.lock(name).acquire(Duration.ofSeconds(20)).close();
                    return null;
                });
                await().atMost(Duration.ofSeconds(10)).until(() -> ticketsIn(admin, "baton_bell", name) == 1);
                String first = ticketBells(admin, name).get(0);
                await().atMost(Duration.ofSeconds(10)).until(() -> bellUsedBy(admin, first) != null);
                try (PreparedStatement ps = admin.prepareStatement("DELETE FROM baton_bell_queue WHERE name = ?")) {
                    ps.setString(1, name);
                    assertThat(ps.executeUpdate()).isEqualTo(1);
                }
                await("the refresh takes a new place").atMost(Duration.ofSeconds(10))
                        .until(() -> ticketsIn(admin, "baton_bell", name) == 1);
                String second = ticketBells(admin, name).get(0);
                assertThat(second).as("the new place's bell").isNotEqualTo(first);
                await("the new place keeps its bell").atMost(Duration.ofSeconds(10))
                        .until(() -> bellUsedBy(admin, second) != null);
                assertThat(bellUsedBy(admin, first)).as("the old place's bell, let go").isNull();
                held.close();
                waiter.get(10, TimeUnit.SECONDS);
            } finally {
                one.shutdownNow();
            }
        }
    }

    /** The body of a bell test: what {@link #onAContendedBell} set up. */
    private interface BellTest {
        void run(Lease held, JdbcLockClient waiterClient, SqlRecordingDataSource recorded, Connection admin,
                 ExecutorService two) throws Exception;
    }

    /**
     * Two MariaDB clients on table {@code baton_bell}, each on a pool of its own, the waiter's recorded: the holder
     * holds {@code name} by a contended grant, its bell armed ({@link #contendedGrantee}); then {@code test} runs.
     */
    private static void onAContendedBell(String name, BellTest test) throws Exception {
        onTwoBellClients((holderClient, waiterClient, recorded, admin, two) -> test.run(
                contendedGrantee(holderClient, waiterClient, name, admin, two), waiterClient, recorded, admin, two));
    }

    /** A test on two MariaDB clients of table {@code baton_bell}, a holder's and a waiter's. */
    private interface TwoBellClients {
        void run(JdbcLockClient holderClient, JdbcLockClient waiterClient, SqlRecordingDataSource recorded,
                 Connection admin, ExecutorService two) throws Exception;
    }

    /**
     * Two MariaDB clients on table {@code baton_bell}, each on a pool of its own, the waiter's recorded, an admin
     * connection and two threads; then {@code test} runs.
     */
    private static void onTwoBellClients(TwoBellClients test) throws Exception {
        try (var holderPool = pool(MariaDbFixture.ADMIN_URL, true, null);
             var waiterPool = pool(MariaDbFixture.ADMIN_URL, true, null);
             Connection admin = DriverManager.getConnection(MariaDbFixture.ADMIN_URL)) {
            SqlRecordingDataSource recorded = new SqlRecordingDataSource(waiterPool);
            try (JdbcLockClient holderClient = bellClient(holderPool);
                 JdbcLockClient waiterClient = bellClient(recorded)) {
                ExecutorService two = Executors.newFixedThreadPool(2);
                try {
                    test.run(holderClient, waiterClient, recorded, admin, two);
                } finally {
                    two.shutdownNow();
                }
            }
        }
    }

    /** A MariaDB client with a 60 s lease on table {@code baton_bell} (created if missing). */
    private static JdbcLockClient bellClient(javax.sql.DataSource dataSource) {
        return JdbcLocks.builder(dataSource).tableName("baton_bell").createTableIfMissing()
                .leaseTime(Duration.ofSeconds(60)).build();
    }

    /**
     * Makes {@code holderClient} the holder of {@code name} by a contended grant (it waits in line while
     * {@code otherClient} holds the lock, on a thread of {@code threads}), and returns its lease once its bell is
     * armed.
     */
    private static Lease contendedGrantee(JdbcLockClient holderClient, JdbcLockClient otherClient, String name,
                                          Connection admin, ExecutorService threads) throws Exception {
        Lease first = otherClient.lock(name).acquire(Duration.ofSeconds(5));
        Future<Lease> holding = threads.submit(() -> holderClient.lock(name).acquire(Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(10)).until(() -> ticketsIn(admin, "baton_bell", name) == 1);
        first.close();
        Lease held = holding.get(10, TimeUnit.SECONDS);
        await("the contended grantee arms its bell").atMost(Duration.ofSeconds(10))
                .until(() -> bellHolder(admin, "baton_bell", name) != null);
        return held;
    }

    /** Whether some session waits in {@code GET_LOCK} for a bell (MariaDB's process list: state "User lock"). */
    private static boolean waitingOnABell(Connection admin) throws SQLException {
        try (Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM information_schema.processlist"
                     + " WHERE state = 'User lock' AND info LIKE '%IF(GET_LOCK%'")) {
            rs.next();
            return rs.getInt(1) > 0;
        }
    }

    private static int ticketsIn(Connection admin, String table, String name) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT COUNT(*) FROM " + table + "_queue WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /**
     * MariaDB's line is a MEMORY table, whose size was fixed when it was created. Forced: the line is created at the
     * smallest {@code max_heap_table_size} (room for a few tickets) and filled with tickets of waiters of another
     * lock. Returns how many fit.
     */
    private static int fillALine(Statement st, String table, String expires) throws SQLException {
        st.execute("DROP TABLE IF EXISTS " + table + "_queue");
        st.execute("SET SESSION max_heap_table_size = 16384");
        String queueDdl = dev.baton.jdbc.internal.Ddl.statements(Dialect.MARIADB.schemaResource(), table)
                .stream().filter(sql -> sql.contains(table + "_queue")).findFirst().orElseThrow();
        assertThat(queueDdl).contains("ENGINE = MEMORY");
        st.execute(queueDdl);
        int filled = 0;
        try {
            for (; filled < 100; filled++) {
                st.executeUpdate("INSERT INTO " + table + "_queue VALUES ('other', 'w" + filled + "',"
                        + " UTC_TIMESTAMP(6), " + expires + ")");
            }
        } catch (SQLException full) {
            assertThat(full.getErrorCode()).as("filling the line: " + full.getMessage()).isEqualTo(1114);
        }
        assertThat(filled).as("tickets that fit").isBetween(1, 99);
        return filled;
    }

    /**
     * A MariaDB line full of live tickets (of waiters of another lock) does not fail a waiter: it waits without a
     * place, polling, and gets the lock when the holder lets go (it failed at once, "line of waiters is full").
     */
    @Test
    void aFullMariaDbLineLetsTheWaiterWaitWithoutAPlace() throws Exception {
        String name = unique("full-line");
        try (Connection admin = DriverManager.getConnection(MariaDbFixture.ADMIN_URL);
             Statement st = admin.createStatement()) {
            fillALine(st, "baton_full", "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR");
            try (var pool = pool(MariaDbFixture.ADMIN_URL, true, null);
                 JdbcLockClient locks = JdbcLocks.builder(pool).tableName("baton_full").createTableIfMissing()
                         .build()) {
                ExecutorService one = Executors.newSingleThreadExecutor();
                try {
                    Lease held = locks.lock(name).acquire(Duration.ofSeconds(5));
                    Future<Long> waiter = one.submit(() -> {
                        try (Lease l = locks.lock(name).acquire(Duration.ofSeconds(20))) {
                            return l.fencingToken();
                        }
                    });
                    // the waiter finds the line full, and goes on waiting (a full line failed it at once)
                    await("the waiter goes on waiting").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                            .until(() -> !waiter.isDone());
                    held.close();
                    assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
                } finally {
                    one.shutdownNow();
                }
            }
        }
    }

    /**
     * A MariaDB line full of dead tickets (expired: their waiters died) is cleaned by the backend itself when a
     * waiter finds it full, and the waiter takes its place (it failed, "line of waiters is full", until an operator
     * purged).
     */
    @Test
    void aMariaDbLineFullOfDeadTicketsIsCleanedAndTheWaiterTakesItsPlace() throws Exception {
        String name = unique("dead-line");
        try (Connection admin = DriverManager.getConnection(MariaDbFixture.ADMIN_URL);
             Statement st = admin.createStatement()) {
            fillALine(st, "baton_full", "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND");
            try (var pool = pool(MariaDbFixture.ADMIN_URL, true, null);
                 JdbcLockClient locks = JdbcLocks.builder(pool).tableName("baton_full").createTableIfMissing()
                         .build()) {
                ExecutorService one = Executors.newSingleThreadExecutor();
                try {
                    Lease held = locks.lock(name).acquire(Duration.ofSeconds(5));
                    Future<Long> waiter = one.submit(() -> {
                        try (Lease l = locks.lock(name).acquire(Duration.ofSeconds(20))) {
                            return l.fencingToken();
                        }
                    });
                    await("the waiter takes its place").atMost(Duration.ofSeconds(10))
                            .until(() -> ticketsIn(admin, "baton_full", name) == 1);
                    held.close();
                    assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
                } finally {
                    one.shutdownNow();
                }
            }
        }
    }

    /** Regression: under REPEATABLE READ a contended PostgreSQL upsert failed with 40001 instead of waiting. */
    @Test
    void aPostgresPoolDefaultingToRepeatableReadStillExcludes() throws Exception {
        String name = unique("repeatable-read");
        long[] counter = {0, 0}; // [0] under the plain lock, [1] under the read-write lock's write side
        try (var rr = pool(PostgresFixture.ADMIN_URL, true, "TRANSACTION_REPEATABLE_READ");
             JdbcLockClient a = JdbcLocks.builder(rr).createTableIfMissing().build();
             JdbcLockClient b = JdbcLocks.builder(rr).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (JdbcLockClient c : List.of(a, b)) {
                    for (int t = 0; t < 2; t++) {
                        futures.add(pool.submit(() -> {
                            for (int i = 0; i < 15; i++) {
                                try (Lease l = c.lock(name).acquire(Duration.ofSeconds(30))) {
                                    long v = counter[0];
                                    Thread.yield();
                                    counter[0] = v + 1;
                                }
                                try (Lease w = c.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(30))) {
                                    long v = counter[1];
                                    Thread.yield();
                                    counter[1] = v + 1;
                                }
                            }
                            return null;
                        }));
                    }
                }
                for (Future<?> f : futures) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
        }
        assertThat(counter[0]).as("under the plain lock").isEqualTo(2L * 2 * 15);
        assertThat(counter[1]).as("under the write lock").isEqualTo(2L * 2 * 15);
    }

    /**
     * Regression (a 40001 out of {@link #aPostgresPoolDefaultingToRepeatableReadStillExcludes}): on a pool
     * defaulting to REPEATABLE READ, the read-write acquire created the name's gate row in a statement of its
     * own, at the pool's isolation. Another client creating the same gate row at the same moment made that
     * {@code INSERT … ON CONFLICT DO NOTHING} wait for it and then fail with 40001, since the row it conflicted
     * with was committed after the statement's snapshot. Forced here: an explicit transaction inserts the gate
     * row and commits only once the client's acquire waits for it.
     */
    @Test
    void aReadWriteAcquireOnARepeatableReadPoolWaitsOutAGateRowCreatedConcurrently() throws Exception {
        String table = "baton_rr_gate_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
        String name = unique("gate");
        try (var rr = pool(PostgresFixture.ADMIN_URL, true, "TRANSACTION_REPEATABLE_READ");
             JdbcLockClient client = JdbcLocks.builder(rr).tableName(table).createTableIfMissing().build();
             Connection admin = java.sql.DriverManager.getConnection(PostgresFixture.ADMIN_URL);
             Connection other = java.sql.DriverManager.getConnection(PostgresFixture.ADMIN_URL)) {
            try {
                other.setAutoCommit(false);
                try (PreparedStatement ps = other.prepareStatement("INSERT INTO " + table + "_rw (name, owner, mode,"
                        + " token, acquired_at, expires_at) VALUES (?, '', 'g', 0, now(), now())")) {
                    ps.setString(1, name);
                    ps.executeUpdate();
                }
                var attempt = java.util.concurrent.CompletableFuture.supplyAsync(
                        () -> client.readWriteLock(name).writeLock().tryAcquire());
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                        .until(() -> attempt.isDone() || blockedBy(admin, other) > 0);
                other.commit();
                assertThat(attempt.get(10, TimeUnit.SECONDS)).as("granted once the other gate row committed")
                        .isPresent().get().satisfies(Lease::close);
            } finally {
                if (!other.getAutoCommit()) {
                    other.rollback();
                }
                dropTables(admin, table);
            }
        }
    }

    /**
     * Regression: on a pool defaulting to REPEATABLE READ, a release (plain or read-write) whose row another
     * transaction changed and committed while the release's statement waited for it failed with 40001, and
     * {@code close()} threw, where READ COMMITTED would have re-read the row and deleted it. Forced here: an
     * explicit transaction touches the holder's row (as a concurrent renewal does) and commits once the
     * release waits for it.
     */
    @Test
    void aReleaseOnARepeatableReadPoolWaitsOutAConcurrentUpdateOfItsRow() throws Exception {
        String table = "baton_rr_rel_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
        String name = unique("release");
        try (var rr = pool(PostgresFixture.ADMIN_URL, true, "TRANSACTION_REPEATABLE_READ");
             JdbcLockClient client = JdbcLocks.builder(rr).tableName(table).createTableIfMissing().build();
             Connection admin = java.sql.DriverManager.getConnection(PostgresFixture.ADMIN_URL);
             Connection other = java.sql.DriverManager.getConnection(PostgresFixture.ADMIN_URL)) {
            try {
                for (String rows : List.of(table, table + "_rw")) {
                    Lease held = rows.equals(table) ? client.lock(name).acquire(Duration.ofSeconds(5))
                            : client.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5));
                    other.setAutoCommit(false);
                    try (PreparedStatement ps = other.prepareStatement("UPDATE " + rows
                            + " SET expires_at = expires_at WHERE name = ? AND owner <> ''")) {
                        ps.setString(1, name);
                        assertThat(ps.executeUpdate()).as("the holder's row in %s", rows).isEqualTo(1);
                    }
                    var release = java.util.concurrent.CompletableFuture.runAsync(held::close);
                    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                            .until(() -> release.isDone() || blockedBy(admin, other) > 0);
                    other.commit();
                    release.get(10, TimeUnit.SECONDS);
                    Lease again = rows.equals(table) ? client.lock(name).tryAcquire().orElse(null)
                            : client.readWriteLock(name).writeLock().tryAcquire().orElse(null);
                    assertThat(again).as("released in %s", rows).isNotNull();
                    again.close();
                }
            } finally {
                if (!other.getAutoCommit()) {
                    other.rollback();
                }
                dropTables(admin, table);
            }
        }
    }

    /** How many server sessions wait for a lock that {@code holder}'s session holds. */
    private static int blockedBy(Connection admin, Connection holder) throws SQLException {
        long pid = holder.unwrap(org.postgresql.PGConnection.class).getBackendPID();
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                + " WHERE ? = ANY (pg_blocking_pids(pid))")) {
            ps.setInt(1, (int) pid);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static void dropTables(Connection admin, String table) throws SQLException {
        try (Statement st = admin.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table + "_rw, " + table + "_queue, " + table + "_released, " + table + "_rowlocks, "
                    + table + "_versions, " + table + "_names, " + table + " CASCADE");
            st.execute("DROP SEQUENCE IF EXISTS " + table + "_token_seq");
        }
    }

    @Test
    void tableNamesAreValidated() {
        JdbcLocks.Builder b = JdbcLocks.builder(postgres());
        assertThatThrownBy(() -> b.tableName("locks; DROP TABLE x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not allowed");
        assertThatThrownBy(() -> b.tableName("Locks")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.tableName("1locks")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.tableName("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be null or empty");
        assertThatThrownBy(() -> b.tableName("t".repeat(49))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 48");
        assertThatThrownBy(() -> JdbcLocks.builder(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dataSource");
        assertThatThrownBy(() -> b.leaseTime(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime must be positive");
        assertThatThrownBy(() -> b.leaseTime(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime must be positive");
        assertThat(b.tableName("my_locks_2")).isSameAs(b);
    }

    @Test
    void concurrentTableCreationOnPostgresIsSafe() throws Exception {
        String table = "baton_ddl_" + Long.toString(System.nanoTime(), 36);
        PGSimpleDataSource ds = postgres();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<JdbcLockClient>> clients = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                clients.add(pool.submit(() -> JdbcLocks.builder(ds).tableName(table).createTableIfMissing().build()));
            }
            for (Future<JdbcLockClient> f : clients) {
                try (JdbcLockClient c = f.get(30, TimeUnit.SECONDS)) {
                    assertThat(c.tableName()).isEqualTo(table);
                    assertThat(c.dialect()).isEqualTo(Dialect.POSTGRESQL);
                }
            }
        } finally {
            pool.shutdownNow();
            try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
                st.execute("DROP SEQUENCE IF EXISTS " + table + "_token_seq");
            }
        }
    }

    /** How many tickets the line of {@code name} holds, live or not. */
    private static int tickets(JdbcFixture fixture, String name) throws SQLException {
        try (Connection admin = fixture.admin();
             PreparedStatement ps = admin.prepareStatement("SELECT COUNT(*) FROM " + fixture.table() + "_queue WHERE name = ?")) {
            ps.setString(1, name);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /**
     * {@code createTableIfMissing()} on complete tables reads, and sends no DDL: one look at every object the DDL
     * makes, so a client's start (each {@code baton run}) does not pay the DDL's statements, its "already exists"
     * notices or, on SQLite, a write transaction.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void aBuildOnCompleteTablesSendsNoDdl(JdbcFixture fixture) {
        fixture.newClient(ClientConfig.defaults()).close(); // the fixture's tables, complete
        String[] hostAndPort = fixture.hostAndPort(); // the server itself, no fault proxy
        SqlRecordingDataSource recorded = new SqlRecordingDataSource(
                fixture.rawDataSource(hostAndPort == null ? -1 : Integer.parseInt(hostAndPort[1])));
        JdbcLocks.Builder builder = JdbcLocks.builder(recorded).tableName(fixture.table()).createTableIfMissing();
        if (fixture.forcedDialect() != null) {
            builder.dialect(fixture.forcedDialect());
        }
        try (JdbcLockClient locks = builder.build()) {
            assertThat(recorded.sql()).as("statements of build() on complete tables")
                    .noneMatch(sql -> sql.toUpperCase(java.util.Locale.ROOT).matches("(?s)\\s*(CREATE|INSERT|ALTER).*"));
            long first = locks.lock(unique("complete")).acquire(Duration.ofSeconds(5)).fencingToken();
            try (Lease second = locks.lock(unique("complete")).acquire(Duration.ofSeconds(5))) {
                assertThat(second.fencingToken()).isGreaterThan(first);
            }
        }
    }

    /**
     * A token counter table without its row (SQLite, and MySQL's counter on MariaDB) is not complete:
     * {@code createTableIfMissing()} puts the row back, and tokens are drawn again.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("counterRowFixtures")
    void aCounterTableWithoutItsRowGetsItBack(JdbcFixture fixture) throws SQLException {
        String table = ownTable("ctrrow");
        try {
            ownTableClient(fixture, table).close();
            try (Connection admin = fixture.admin(); Statement st = admin.createStatement()) {
                st.executeUpdate("DELETE FROM " + table + "_token");
            }
            try (LockClient locks = ownTableClient(fixture, table);
                 Lease held = locks.lock(unique("counter")).acquire(Duration.ofSeconds(5))) {
                assertThat(held.fencingToken()).isPositive();
            }
        } finally {
            dropOwnTables(fixture, table);
        }
    }

    /** A unique lease table name for a test that must not touch the fixtures' tables. */
    private static String ownTable(String base) {
        return "baton_" + base + "_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    /** A client of {@code fixture}'s database on the lease table {@code table}, created if missing. */
    private static JdbcLockClient ownTableClient(JdbcFixture fixture, String table) {
        String[] hostAndPort = fixture.hostAndPort();
        JdbcLocks.Builder b = JdbcLocks.builder(fixture.rawDataSource(hostAndPort == null ? -1
                        : Integer.parseInt(hostAndPort[1])))
                .tableName(table).createTableIfMissing();
        if (fixture.forcedDialect() != null) {
            b.dialect(fixture.forcedDialect());
        }
        return b.build();
    }

    /** Drops the tables {@link #ownTableClient} created for {@code table}. */
    private static void dropOwnTables(JdbcFixture fixture, String table) throws SQLException {
        try (Connection admin = fixture.admin(); Statement st = admin.createStatement()) {
            for (String t : List.of(table, table + "_token", table + "_rw", table + "_queue", table + "_rowlocks")) {
                st.execute("DROP TABLE IF EXISTS " + t);
            }
        }
    }

    /** The fixtures whose tokens come from a counter table's row (elsewhere from a sequence). */
    Stream<JdbcFixture> counterRowFixtures() {
        return fixtures().filter(f -> f.name().equals("sqlite") || f.forcedDialect() == Dialect.MYSQL);
    }

    /**
     * A counter row deleted while a client runs (by hand, a restore) must fail the grant, never hand out token 0 to
     * every later holder: equal tokens would let a stale holder's write through a fence.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("counterRowFixtures")
    void aCounterRowDeletedWhileAClientRunsFailsTheGrantInsteadOfGivingTokenZero(JdbcFixture fixture)
            throws SQLException {
        String table = ownTable("ctrgone");
        try (LockClient locks = ownTableClient(fixture, table)) {
            try (Connection admin = fixture.admin(); Statement st = admin.createStatement()) {
                st.executeUpdate("DELETE FROM " + table + "_token");
            }
            assertThatThrownBy(() -> locks.lock(unique("no-counter")).tryAcquire().ifPresent(Lease::close))
                    .isInstanceOf(dev.baton.LockBackendException.class)
                    .hasMessageContaining(table + "_token");
        } finally {
            dropOwnTables(fixture, table);
        }
    }

    /**
     * The line of waiters: a waiter that times out leaves no ticket; a freed lock is kept for the waiter in line,
     * so the client that let it go cannot take it back past the waiter (before issue 13 it could, and usually did);
     * a client closed while its thread waits deletes that thread's ticket.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void aFreedLockGoesToTheWaiterInLineNotBackToTheClientThatLetItGo(JdbcFixture fixture) throws Exception {
        String name = unique("line");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (LockClient a = fixture.newClient(ClientConfig.defaults()); LockClient b = fixture.newClient(ClientConfig.defaults());
             LockClient d = fixture.newClient(ClientConfig.defaults())) {
            Lease held = a.lock(name).acquire(Duration.ofSeconds(5));
            assertThatThrownBy(() -> b.lock(name).acquire(Duration.ofMillis(200)))
                    .isInstanceOf(dev.baton.LockTimeoutException.class);
            assertThat(tickets(fixture, name)).as("a waiter that timed out left its place").isZero();

            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
            Future<Long> waiter = pool.submit(() -> {
                try (Lease l = b.lock(name).acquire(Duration.ofSeconds(30))) {
                    done.await();
                    return l.fencingToken();
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> tickets(fixture, name) == 1);
            held.close();
            assertThat(a.lock(name).tryAcquire()).as("the releasing client cannot take it back past the waiter")
                    .isEmpty();
            await().atMost(Duration.ofSeconds(10)).until(() -> tickets(fixture, name) == 0); // b took it
            done.countDown();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());

            Lease again = a.lock(name).acquire(Duration.ofSeconds(5));
            Future<?> closing = pool.submit(() -> d.lock(name).acquire(Duration.ofSeconds(30)));
            await().atMost(Duration.ofSeconds(10)).until(() -> tickets(fixture, name) == 1);
            d.close();
            assertThat(tickets(fixture, name)).as("a closed client left its place").isZero();
            assertThatThrownBy(() -> closing.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockException.class);
            again.close();
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void thePurgeNeverRemovesALiveLeaseAndTokensKeepIncreasingAfterIt(JdbcFixture fixture) throws SQLException {
        String live = unique("purge-live");
        String old = unique("purge-old");
        try (LockClient a = fixture.newClient(ClientConfig.defaults()); LockClient b = fixture.newClient(ClientConfig.defaults())) {
            JdbcLockClient jdbc = (JdbcLockClient) ((ForwardingLockClient) a).delegate();
            Lease held = a.lock(live).acquire(Duration.ofSeconds(5));
            long oldToken;
            try (Lease l = a.lock(old).acquire(Duration.ofSeconds(5))) {
                oldToken = l.fencingToken();
            }
            ageRow(fixture, old);
            assertThatThrownBy(() -> jdbc.purgeExpired(Duration.ofMillis(10)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1 s");
            int purged = jdbc.purgeExpired(Duration.ofHours(1));
            assertThat(purged).isGreaterThanOrEqualTo(1);
            List<String> names = a.list().stream().map(LockInfo::name).toList();
            assertThat(names).contains(live).doesNotContain(old);
            assertThat(b.lock(live).tryAcquire()).as("live lease untouched by the purge").isEmpty();
            assertThat(held.isValid()).isTrue();
            try (Lease again = b.lock(old).acquire(Duration.ofSeconds(5))) {
                assertThat(again.fencingToken()).as("token after the row was purged").isGreaterThan(oldToken);
            }
            held.close();
        }
    }

    /**
     * A purge that deleted a lock's row while a waiter keeps a live place in its line: the grant that inserts the
     * row again obeys the line, so a try-once of another client does not pass the waiter (it did, on every
     * database: the insert path ignored the line). The place is written on the server directly, live for a minute,
     * so that no attempt of its waiter races the try-once.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void aGrantThatInsertsAPurgedRowDoesNotPassALivePlaceInLine(JdbcFixture fixture) throws SQLException {
        String name = unique("purged-line");
        try (LockClient a = fixture.newClient(ClientConfig.defaults()); LockClient b = fixture.newClient(ClientConfig.defaults())) {
            JdbcLockClient jdbc = (JdbcLockClient) ((ForwardingLockClient) a).delegate();
            a.lock(name).acquire(Duration.ofSeconds(5)).close();
            ageRow(fixture, name);
            assertThat(jdbc.purgeExpired(Duration.ofHours(1))).isGreaterThanOrEqualTo(1);
            assertThat(a.list().stream().map(LockInfo::name).toList()).as("purged").doesNotContain(name);
            placeInLine(fixture, name, "waiting-client#1", 60);
            assertThat(b.lock(name).tryAcquire()).as("a try-once while a live waiter is in line for a purged row")
                    .isEmpty();
            assertThat(a.lock(name).tryAcquire()).as("another client's try-once").isEmpty();
            withdrawPlace(fixture, name, "waiting-client#1");
            var free = b.lock(name).tryAcquire();
            assertThat(free).as("the place withdrawn: the lock is free").isPresent();
            free.get().close();
        }
    }

    /** Writes a live place in the line of {@code name} for {@code owner}, expiring {@code seconds} from now. */
    private static void placeInLine(JdbcFixture fixture, String name, String owner, int seconds) throws SQLException {
        String sql = switch (fixture.name()) {
            case "postgresql" -> "INSERT INTO " + fixture.table() + "_queue VALUES (?, ?, clock_timestamp(),"
                    + " now() + make_interval(secs => ?))";
            case "sqlite" -> "INSERT INTO " + fixture.table() + "_queue VALUES (?, ?, "
                    + dev.baton.jdbc.internal.SqlClocks.SQLITE_NOW + ", " + dev.baton.jdbc.internal.SqlClocks.SQLITE_NOW
                    + " + ? * 1000)";
            default -> "INSERT INTO " + fixture.table() + "_queue VALUES (?, ?, UTC_TIMESTAMP(6),"
                    + " UTC_TIMESTAMP(6) + INTERVAL ? SECOND)";
        };
        try (Connection c = fixture.admin(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setInt(3, seconds);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    private static void withdrawPlace(JdbcFixture fixture, String name, String owner) throws SQLException {
        try (Connection c = fixture.admin(); PreparedStatement ps = c.prepareStatement("DELETE FROM " + fixture.table()
                + "_queue WHERE name = ? AND owner = ?")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    /** Moves a released row's expiry two hours into the past, by the database clock. */
    private static void ageRow(JdbcFixture fixture, String name) throws SQLException {
        String sql = switch (fixture.name()) {
            case "postgresql" -> "UPDATE " + fixture.table() + " SET expires_at = now() - interval '2 hours' WHERE name = ?";
            case "sqlite" -> "UPDATE " + fixture.table() + " SET expires_at = expires_at - 7200000 WHERE name = ?";
            default -> "UPDATE " + fixture.table() + " SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR WHERE name = ?";
        };
        try (Connection c = fixture.admin(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void listShowsHolderTokenAndServerTimes(JdbcFixture fixture) {
        String name = unique("list");
        try (LockClient a = fixture.newClient(ClientConfig.defaults())) {
            try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                LockInfo info = a.list().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
                assertThat(info.held()).isTrue();
                assertThat(info.holder()).isEqualTo(l.holderId());
                assertThat(info.fencingToken()).isEqualTo(l.fencingToken());
                assertThat(info.expiresAt()).isAfter(info.acquiredAt());
            }
            LockInfo after = a.list().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
            assertThat(after.held()).isFalse();
            assertThat(after.holder()).isNull();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void oneClientKeepsTwelveHundredLocksAliveAcrossRenewals(JdbcFixture fixture) throws Exception {
        // 3 s: a round of 1,200 renewals on a busy 2-core machine can take a second or more; a lease shorter than
        // a few such rounds would measure the machine, not the renewal
        Duration lease = Duration.ofSeconds(3);
        try (LockClient a = fixture.newClient(ClientConfig.lease(lease))) {
            List<Lease> held = new ArrayList<>();
            String base = unique("many");
            // more than one renewal statement's worth on SQLite (250), and past SQLite's expression-depth limit
            // (1,000) that a single OR of all keys would hit: a regression the benchmark found
            java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger();
            for (int i = 0; i < 1200; i++) {
                Lease l = a.lock(base + "-" + i).acquire(Duration.ofSeconds(5));
                l.onLost(e -> lost.incrementAndGet());
                held.add(l);
            }
            Thread.sleep(lease.multipliedBy(2).toMillis()); // two lease times: six renewal rounds
            // a round whose answer comes late (1,200 rows on a busy machine) leaves the leases past their local
            // deadline for a moment: not a failure by itself, as long as they become valid again without being lost
            await().atMost(lease.multipliedBy(5)).until(() -> lost.get() > 0 || held.stream().allMatch(Lease::isValid));
            assertThat(lost).as("leases reported lost while renewed").hasValue(0);
            held.forEach(Lease::close);
        }
    }
}
