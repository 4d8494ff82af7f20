package dev.baton.jdbc.session;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.Lease;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.LockLostException;
import dev.baton.faultproxy.FaultProxy;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import dev.baton.jdbc.internal.SessionKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Regressions of the session strategy found by running it as users do (issue 8 §2): a server that ended the
 * holder's session, a server that closed an idle session, a busy or small pool, a pool whose connections
 * default to {@code autoCommit=false}, and a release while another thread waits on the server. Each server
 * binds the hooks; every table and lock name is unique to the run.
 */
abstract class SessionHardeningTests {
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final String run = Long.toString(System.nanoTime() % 1_000_000_000L, 36);

    /** A driver URL to the server, directly. */
    abstract String url();

    abstract Dialect dialect();

    /** Forced dialect (MySQL on MariaDB), or null to detect. */
    Dialect forcedDialect() {
        return null;
    }

    /** Session settings that make the server close the session after about a second of idleness. */
    abstract String shortIdleTimeoutSql();

    abstract Connection admin() throws SQLException;

    /** Ends a server session as an operator would ({@code pg_terminate_backend}, {@code KILL}). */
    void killSession(Connection admin, long id) throws SQLException {
        try (Statement st = admin.createStatement()) {
            // id is a server session id read from the server
            st.execute(dialect() == Dialect.POSTGRESQL ? "SELECT pg_terminate_backend(" + id + ")" : "KILL " + id);
        }
    }

    /** Whether the server still has this session. */
    boolean sessionAlive(Connection admin, long id) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement(dialect() == Dialect.POSTGRESQL
                ? "SELECT count(*) FROM pg_stat_activity WHERE pid = ?"
                : "SELECT count(*) FROM information_schema.processlist WHERE id = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    /** Whether a server session ({@code id}, or any if -1) waits on the server for the session lock of name. */
    boolean waitingFor(Connection admin, String table, String name, long id) throws SQLException {
        SessionKeys keys = new SessionKeys(table);
        if (dialect() == Dialect.POSTGRESQL) {
            long k = keys.pgKey(name);
            try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_locks WHERE"
                    + " locktype = 'advisory' AND NOT granted AND objsubid = 1 AND classid::bigint = ?"
                    + " AND objid::bigint = ? AND (pid = ? OR ? = -1)")) {
                ps.setLong(1, k >>> 32);
                ps.setLong(2, k & 0xFFFFFFFFL);
                ps.setLong(3, id);
                ps.setLong(4, id);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1) > 0;
                }
            }
        }
        // the key appears in the statement text as the driver sent it
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM information_schema.processlist"
                + " WHERE info LIKE ? AND info LIKE '%GET_LOCK%' AND (id = ? OR ? = -1)")) {
            ps.setString(1, "%" + keys.myKey(name) + "%");
            ps.setLong(2, id);
            ps.setLong(3, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    String table(String what) {
        return "baton_sh_" + what + "_" + run;
    }

    HikariDataSource pool(int max, boolean autoCommit, String initSql) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url());
        hc.setMaximumPoolSize(max);
        hc.setMinimumIdle(0);
        hc.setConnectionTimeout(1500);
        hc.setValidationTimeout(1000);
        hc.setAutoCommit(autoCommit);
        if (initSql != null) {
            hc.setConnectionInitSql(initSql);
        }
        HikariDataSource ds = new HikariDataSource(hc);
        toClose.add(ds);
        return ds;
    }

    JdbcLockClient client(DataSource ds, String table, Strategy strategy, Duration lease) {
        JdbcLocks.Builder b = JdbcLocks.builder(ds).tableName(table).strategy(strategy).createTableIfMissing()
                .leaseTime(lease).maxPollInterval(Duration.ofMillis(50));
        if (forcedDialect() != null) {
            b.dialect(forcedDialect());
        }
        JdbcLockClient c = b.build();
        toClose.add(c);
        return c;
    }

    /** The server session that holds a session lock of {@code table}, from pg_locks / IS_USED_LOCK. */
    long holderSession(Connection admin, String table, String name) throws SQLException {
        SessionKeys keys = new SessionKeys(table);
        if (dialect() == Dialect.POSTGRESQL) {
            long k = keys.pgKey(name);
            try (PreparedStatement ps = admin.prepareStatement("SELECT pid FROM pg_locks WHERE locktype = 'advisory'"
                    + " AND granted AND objsubid = 1 AND classid::bigint = ? AND objid::bigint = ?")) {
                ps.setLong(1, k >>> 32);
                ps.setLong(2, k & 0xFFFFFFFFL);
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).as("the server shows '%s' held", name).isTrue();
                    return rs.getLong(1);
                }
            }
        }
        try (PreparedStatement ps = admin.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            ps.setString(1, keys.myKey(name));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long id = rs.getLong(1);
                assertThat(rs.wasNull()).as("the server shows '%s' held", name).isFalse();
                return id;
            }
        }
    }

    // ---- item 2: exact checkValid ----------------------------------------------------------------------

    @Test
    void checkValidReportsTheLossAtOnceWhenTheServerEndedTheHoldingSession() throws Exception {
        String table = table("kill");
        // a 30 s lease renews (probes) every 10 s: only a round trip can see the loss within this test
        JdbcLockClient a = client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(30));
        JdbcLockClient b = client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(30));
        String name = "killed-" + run;
        Lease lease = a.lock(name).acquire(Duration.ofSeconds(5));
        AtomicInteger lost = new AtomicInteger();
        lease.onLost(e -> lost.incrementAndGet());
        lease.checkValid(); // confirmed on the server while held
        try (Connection admin = admin()) {
            long holder = holderSession(admin, table, name);
            killSession(admin, holder);
            await().atMost(Duration.ofSeconds(10)).until(() -> !sessionAlive(admin, holder));
        }
        try (Lease other = b.lock(name).tryAcquire().orElseThrow(
                () -> new AssertionError("the server freed the lock with the session"))) {
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining(name).hasMessageContaining("no longer shows");
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class);
            assertThat(lost).as("listeners run once").hasValue(1);
            assertThat(other.fencingToken()).isGreaterThan(lease.fencingToken());
        }
        lease.close();
    }

    @Test
    void checkValidReportsATakeoverAtOnceOnTheLeaseStrategy() throws Exception {
        String table = table("lease");
        JdbcLockClient a = client(pool(4, true, null), table, Strategy.LEASE, Duration.ofSeconds(30));
        JdbcLockClient b = client(pool(4, true, null), table, Strategy.LEASE, Duration.ofSeconds(30));
        String name = "takeover-" + run;
        Lease lease = a.lock(name).acquire(Duration.ofSeconds(5));
        AtomicInteger lost = new AtomicInteger();
        lease.onLost(e -> lost.incrementAndGet());
        lease.checkValid();
        try (Connection admin = admin(); PreparedStatement ps = admin.prepareStatement("UPDATE " + table
                + " SET expires_at = " + (dialect() == Dialect.POSTGRESQL ? "now() - interval '1 second'"
                : "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND") + " WHERE name = ?")) {
            ps.setString(1, name);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        try (Lease other = b.lock(name).tryAcquire().orElseThrow()) {
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class).hasMessageContaining(name);
            assertThat(lost).hasValue(1);
            assertThat(other.fencingToken()).isGreaterThan(lease.fencingToken());
        }
        lease.close();
    }

    @Test
    void checkValidReportsALostReadLockAtOnce() throws Exception {
        String table = table("rw");
        JdbcLockClient lease = client(pool(4, true, null), table, Strategy.LEASE, Duration.ofSeconds(30));
        String name = "read-" + run;
        Lease read = lease.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
        read.checkValid();
        try (Connection admin = admin(); PreparedStatement ps = admin.prepareStatement("DELETE FROM " + table
                + "_rw WHERE name = ? AND mode = 'r'")) {
            ps.setString(1, name); // the row gone, as after its expiry and a purge
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        assertThatThrownBy(read::checkValid).isInstanceOf(LockLostException.class).hasMessageContaining(name);
        read.close();
        if (dialect() != Dialect.POSTGRESQL) {
            return; // session read-write locks are PostgreSQL's shared advisory locks
        }
        JdbcLockClient session = client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(30));
        Lease shared = session.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
        shared.checkValid();
        SessionKeys keys = new SessionKeys(table);
        long k = keys.pgRwKey(name);
        try (Connection admin = admin(); PreparedStatement ps = admin.prepareStatement("SELECT pid FROM pg_locks"
                + " WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid::bigint = ?"
                + " AND objid::bigint = ? AND mode = 'ShareLock'")) {
            ps.setLong(1, k >>> 32);
            ps.setLong(2, k & 0xFFFFFFFFL);
            long holder;
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                holder = rs.getLong(1);
            }
            killSession(admin, holder);
            await().atMost(Duration.ofSeconds(10)).until(() -> !sessionAlive(admin, holder));
        }
        assertThatThrownBy(shared::checkValid).isInstanceOf(LockLostException.class).hasMessageContaining(name);
        shared.close();
    }

    // ---- item 3: a session the server closed while idle -------------------------------------------------

    @Test
    void theFirstAcquireAfterTheServerClosedTheIdleSessionSucceeds() throws Exception {
        String table = table("idle");
        JdbcLockClient a = client(pool(4, true, shortIdleTimeoutSql()), table, Strategy.SESSION,
                Duration.ofSeconds(10));
        String name = "idle-" + run;
        long session;
        try (Lease lease = a.lock(name).acquire(Duration.ofSeconds(5)); Connection admin = admin()) {
            session = holderSession(admin, table, name);
        }
        try (Connection admin = admin()) {
            // the server itself ends the idle session (idle_session_timeout / wait_timeout)
            await().atMost(Duration.ofSeconds(20)).until(() -> !sessionAlive(admin, session));
        }
        Optional<Lease> again = a.lock(name).tryAcquire();
        assertThat(again).as("the first acquire after the server closed the idle session").isPresent();
        again.get().close();
        // and a blocking wait opens its session after idleness as well
        try (Lease lease = a.lock(name + "-2").acquire(Duration.ofSeconds(5))) {
            lease.checkValid();
        }
    }

    /** A driver URL to the server through a local port (a {@link FaultProxy}). */
    abstract String urlVia(int port);

    abstract int serverPort();

    @Test
    void theFirstAcquireAfterTheNetworkSilentlyDroppedTheIdleSessionDoesNotHang() throws Exception {
        String table = table("nat");
        client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(3)).close(); // the tables
        FaultProxy dropped = new FaultProxy("127.0.0.1", serverPort());
        FaultProxy fresh = new FaultProxy("127.0.0.1", serverPort());
        toClose.add(dropped);
        toClose.add(fresh);
        AtomicReference<FaultProxy> route = new AtomicReference<>(dropped);
        DataSource routed = new RoutedDataSource(() -> urlVia(route.get().port()));
        JdbcLocks.Builder b = JdbcLocks.builder(routed).tableName(table).strategy(Strategy.SESSION)
                .leaseTime(Duration.ofSeconds(3)).sessionKeepalive(Duration.ofSeconds(1), Duration.ofSeconds(1), 1);
        if (forcedDialect() != null) {
            b.dialect(forcedDialect());
        }
        JdbcLockClient a = b.build();
        toClose.add(a);
        String name = "nat-" + run;
        a.lock(name).tryAcquire().orElseThrow().close();
        // a NAT forgets the idle session's flow: its packets vanish, no reset; new connections get through
        route.set(fresh);
        dropped.fault(FaultProxy.Mode.BLACKHOLE);
        Thread.sleep(1500); // the precondition: the session idle longer than the keepalive idle time (1 s)
        CompletableFuture<Optional<Lease>> again = CompletableFuture.supplyAsync(() -> a.lock(name).tryAcquire());
        // a statement on the dropped session would hang until the 15 s network timeout
        Optional<Lease> got = again.get(10, TimeUnit.SECONDS);
        assertThat(got).isPresent();
        got.get().close();
    }

    /** Connects through whatever URL the supplier gives at each call, without a pool. */
    static final class RoutedDataSource implements DataSource {
        private final java.util.function.Supplier<String> url;

        RoutedDataSource(java.util.function.Supplier<String> url) {
            this.url = url;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return java.sql.DriverManager.getConnection(url.get());
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public java.io.PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(java.io.PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public java.util.logging.Logger getParentLogger() {
            return java.util.logging.Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }

    // ---- item 4: a busy pool ---------------------------------------------------------------------------

    @Test
    void aBusyPoolNeitherLosesSessionLeasesNorBlocksANewName() throws Exception {
        String table = table("busy");
        HikariDataSource ds = pool(2, true, null);
        // a short lease: the old registration waited 1.5 s for a pool connection while holding the session,
        // and the keepalive probe waited behind it past the lease's deadline
        JdbcLockClient a = client(ds, table, Strategy.SESSION, Duration.ofSeconds(1));
        Lease held = a.lock("held-" + run).acquire(Duration.ofSeconds(5));
        AtomicInteger lost = new AtomicInteger();
        held.onLost(e -> lost.incrementAndGet());
        try (Connection application = ds.getConnection()) { // the application takes the pool's free connection
            assertThat(application.isValid(1)).isTrue();
            for (int i = 0; i < 5; i++) {
                Optional<Lease> fresh = a.lock("new-" + i + "-" + run).tryAcquire();
                assertThat(fresh).as("a new name while the pool is busy").isPresent();
                fresh.get().close();
            }
            held.checkValid();
            assertThat(lost).hasValue(0);
        }
        held.close();
    }

    @Test
    void aKeepaliveProbeCountsASessionBusyWithAStatementAlive() throws Exception {
        String table = table("probe");
        // a 1 s lease renews every 333 ms; the main session is kept busy for longer than the lease
        JdbcLockClient a = client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(1));
        Lease held = a.lock("held-" + run).acquire(Duration.ofSeconds(5));
        AtomicInteger lost = new AtomicInteger();
        held.onLost(e -> lost.incrementAndGet());
        String blocked = "blocked-" + run;
        SessionKeys keys = new SessionKeys(table);
        try (Connection admin = admin()) {
            // an uncommitted row with the same key makes the client's name registration wait on the server
            admin.setAutoCommit(false);
            try (PreparedStatement ps = admin.prepareStatement("INSERT INTO " + table + "_names (lock_key, name)"
                    + " VALUES (?, ?)")) {
                if (dialect() == Dialect.POSTGRESQL) {
                    ps.setLong(1, keys.pgKey(blocked));
                } else {
                    ps.setString(1, keys.myKey(blocked));
                }
                ps.setString(2, blocked);
                ps.executeUpdate();
            }
            CompletableFuture<Optional<Lease>> busy = CompletableFuture.supplyAsync(() -> a.lock(blocked).tryAcquire());
            // while the main session is busy with that statement for twice the lease, the lease is kept: never
            // reported lost, and valid. A probe whose answer comes late (a busy machine) leaves it past its local
            // deadline for a moment, which is not a failure by itself: it must then become valid again, not lost
            // (as in LivenessContract.renewalKeepsALeaseAliveForFiveTimesItsLeaseTime)
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < end) {
                if (!held.isValid()) {
                    await().atMost(Duration.ofSeconds(5)).until(() -> held.isValid() || lost.get() > 0);
                }
                assertThat(lost).as("times reported lost while its session was busy").hasValue(0);
                Thread.sleep(50);
            }
            assertThat(busy).as("the registration still waits on the server").isNotDone();
            admin.rollback();
            Optional<Lease> got = busy.get(20, TimeUnit.SECONDS);
            assertThat(got).isPresent();
            got.get().close();
        }
        held.checkValid();
        assertThat(lost).hasValue(0);
        held.close();
    }

    // ---- item 6: a pool of two -------------------------------------------------------------------------

    @Test
    void aPoolOfTwoIsEnoughForTheSessionStrategy() throws Exception {
        String table = table("two");
        JdbcLockClient a = client(pool(2, true, null), table, Strategy.SESSION, Duration.ofSeconds(10));
        JdbcLockClient b = client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(10));
        String name = "two-" + run;
        Lease other = b.lock(name).acquire(Duration.ofSeconds(5));
        // a waits on the server (its waiting session) while holding another lock on its main session
        try (Lease mainHeld = a.lock(name + "-main").acquire(Duration.ofSeconds(5))) {
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                    () -> a.lock(name).acquire(Duration.ofSeconds(20)));
            try (Connection admin = admin()) {
                await().atMost(Duration.ofSeconds(10)).until(() -> waitingFor(admin, table, name, -1));
            }
            other.close();
            try (Lease got = waiter.get(20, TimeUnit.SECONDS)) {
                got.checkValid();
                mainHeld.checkValid();
                assertThat(a.list()).extracting(LockInfo::name).contains(name, name + "-main");
            }
        }
    }

    @Test
    void aPoolOfOneIsRefusedAtBuildNamingItsSize() {
        HikariDataSource one = pool(1, true, null);
        assertThatThrownBy(() -> client(one, table("one"), Strategy.SESSION, Duration.ofSeconds(10)))
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.PoolTooSmallException.class)
                .hasMessageContaining("maximumPoolSize is 1")
                .hasMessageContaining("at least 2");
    }

    // ---- item 5: a release does not wait for another thread's blocking slice ------------------------------

    /** The core's server-side wait slice (Acquisition.BLOCKING_SLICE_NANOS). */
    static final long SLICE_MS = 500;
    /** Releases measured by {@link #aReleaseOnTheWaitingSessionDoesNotWaitForAnotherThreadsBlockingSlice}. */
    static final int SLICE_TRIALS = 5;

    /**
     * A release on the waiting session while another thread of the client waits there in a server-side slice.
     * Measured from the start of that slice by the server's clock (its age when seen, from pg_stat_activity /
     * the process list, plus the local time from that look to the release's end), so a release that waits for
     * the slice takes at least {@value #SLICE_MS} ms by construction, however promptly or late the test saw
     * it, and on any load; a release that cancels it takes a few ms. The best of {@value #SLICE_TRIALS}
     * trials must be far below the slice: a loaded machine can slow some trials, not every one.
     */
    @Test
    void aReleaseOnTheWaitingSessionDoesNotWaitForAnotherThreadsBlockingSlice() throws Exception {
        String table = table("slice");
        JdbcLockClient a = client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(10));
        JdbcLockClient b = client(pool(4, true, null), table, Strategy.SESSION, Duration.ofSeconds(10));
        List<Long> sinceSliceStart = new ArrayList<>();
        try (Connection admin = admin()) {
            for (int trial = 0; trial < SLICE_TRIALS; trial++) {
                String first = "slice-a-" + run + "-" + trial;
                String second = "slice-b-" + run + "-" + trial;
                // first: granted to a on its waiting session (a waits on the server while b holds it)
                Lease bFirst = b.lock(first).acquire(Duration.ofSeconds(5));
                CompletableFuture<Lease> aFirst = CompletableFuture.supplyAsync(
                        () -> a.lock(first).acquire(Duration.ofSeconds(20)));
                await().atMost(Duration.ofSeconds(10)).until(() -> waitingFor(admin, table, first, -1));
                bFirst.close();
                Lease held = aFirst.get(20, TimeUnit.SECONDS);
                long waitingSession = holderSession(admin, table, first);
                // second: another thread of a waits for it on the same waiting session, in server-side slices
                Lease bSecond = b.lock(second).acquire(Duration.ofSeconds(5));
                CompletableFuture<Lease> aSecond = CompletableFuture.supplyAsync(
                        () -> a.lock(second).acquire(Duration.ofSeconds(30)));
                long seen;
                long age;
                while (true) {
                    seen = System.nanoTime();
                    age = waitAgeMillis(admin, waitingSession);
                    if (age >= 0) {
                        break;
                    }
                    Thread.sleep(2);
                    assertThat(aSecond).as("a's wait for '%s'", second).isNotDone();
                }
                held.close();
                long ms = age + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - seen);
                sinceSliceStart.add(ms);
                assertThat(a.lock(first).tryAcquire()).as("released on the server").isPresent().get()
                        .satisfies(Lease::close);
                bSecond.close();
                try (Lease got = aSecond.get(20, TimeUnit.SECONDS)) {
                    got.checkValid(); // the cancelled slice left the waiter in line, and it got the lock
                }
            }
        }
        System.out.printf("[%s] release on the waiting session, ms from the start of another thread's slice: %s%n",
                dialect(), sinceSliceStart);
        assertThat(sinceSliceStart.stream().mapToLong(Long::longValue).min().orElseThrow())
                .as("the best of %d releases, in ms from the start of the %d ms slice in flight (one that waits"
                        + " for the slice takes at least %d): %s", SLICE_TRIALS, SLICE_MS, SLICE_MS, sinceSliceStart)
                .isLessThan(SLICE_MS * 4 / 5);
    }

    /**
     * How long ago, by the server's clock, the server-side lock wait in flight on session {@code id} began
     * (PostgreSQL: its statement's start; MySQL/MariaDB: the time in its "User lock" state); -1 if none.
     * Never less than the wait's true age on PostgreSQL (the statement starts before its wait).
     */
    long waitAgeMillis(Connection admin, long id) throws SQLException {
        String sql = dialect() == Dialect.POSTGRESQL
                ? "SELECT EXTRACT(EPOCH FROM clock_timestamp() - query_start) * 1000 FROM pg_stat_activity"
                + " WHERE pid = ? AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
                : "SELECT TIME_MS FROM information_schema.processlist WHERE id = ? AND info LIKE '%GET_LOCK%'";
        try (PreparedStatement ps = admin.prepareStatement(sql)) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? (long) Math.ceil(rs.getDouble(1)) : -1;
            }
        }
    }

    // ---- item 1: autoCommit=false -----------------------------------------------------------------------

    @Test
    void theSessionTablesAndNameRegistryPersistOnAPoolWithAutoCommitOff() throws Exception {
        String table = table("ac");
        JdbcLockClient a = client(pool(4, false, null), table, Strategy.SESSION, Duration.ofSeconds(10));
        String name = "autocommit-" + run;
        try (Lease lease = a.lock(name).acquire(Duration.ofSeconds(5))) {
            lease.checkValid();
            assertThat(a.list()).extracting(LockInfo::name).as("the name registry").contains(name);
        }
        try (Connection admin = admin(); Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table + "_names")) {
            rs.next();
            assertThat(rs.getInt(1)).as("names recorded, committed").isEqualTo(1);
        }
    }
}
