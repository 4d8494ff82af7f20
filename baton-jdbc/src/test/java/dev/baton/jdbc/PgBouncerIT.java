package dev.baton.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.Lease;
import dev.baton.LockException;
import dev.baton.jdbc.fixtures.PgBouncerFixture;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.jdbc.fixtures.SqlRecordingDataSource;
import dev.baton.jdbc.fixtures.TxDatabase;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Through a real PgBouncer in transaction mode (started by scripts/start-servers.sh on :6432): session
 * locks would be silently broken there, so the session strategy refuses it; the lease strategy works, with
 * URLs as users write them, never {@code LISTEN}s through it, and is woken by {@code NOTIFY} only over a
 * direct {@code notificationDataSource}. (The whole lease ladder through it: {@code lease.PgBouncerLeaseIT}.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ResourceLock(PgBouncerFixture.POOL_LOCK) // it pins every server session of PgBouncer's pool (see there)
class PgBouncerIT {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterAll
    void close() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
    }

    /** PgBouncer with the URL a user writes; {@code urlSuffix} adds parameters. */
    private static PGSimpleDataSource bouncer(String urlSuffix) {
        TestServers.require("PgBouncer (transaction mode, in front of PostgreSQL)", "127.0.0.1", 6432);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL("jdbc:postgresql://127.0.0.1:6432/test?user=postgres&connectTimeout=3&socketTimeout=10" + urlSuffix);
        return ds;
    }

    private static PGSimpleDataSource direct() {
        TestServers.require("PostgreSQL", PostgresFixture.HOST, PostgresFixture.PORT);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(PostgresFixture.ADMIN_URL);
        return ds;
    }

    private HikariDataSource pool(DataSource raw) {
        HikariConfig hc = new HikariConfig();
        hc.setDataSource(raw);
        hc.setPoolName("bouncer-it");
        hc.setMaximumPoolSize(4);
        hc.setMinimumIdle(0);
        hc.setConnectionTimeout(5000);
        HikariDataSource pool = new HikariDataSource(hc);
        opened.add(pool);
        return pool;
    }

    private JdbcLockClient client(JdbcLocks.Builder builder) {
        JdbcLockClient client = builder.build();
        opened.add(0, client);
        return client;
    }

    /**
     * Regression: with pgjdbc's default {@code prepareThreshold} (5) a statement run often enough became a named
     * server-side prepared statement, which another transaction's server session lacked or already had from
     * another client: {@code prepared statement "S_3" already exists} (42P05) in about half the runs. Here two
     * clients on URLs without {@code prepareThreshold} alternate on one lock, well past the threshold.
     */
    @Test
    void theLeaseStrategyWorksThroughItWithoutPrepareThresholdInTheUrl() {
        String table = "baton_bouncer_prep";
        JdbcLockClient a = client(JdbcLocks.builder(pool(bouncer(""))).tableName(table).createTableIfMissing());
        JdbcLockClient b = client(JdbcLocks.builder(pool(bouncer(""))).tableName(table));
        String name = "bouncer-prep-" + System.nanoTime();
        long lastToken = 0;
        for (int i = 0; i < 20; i++) {
            JdbcLockClient holder = i % 2 == 0 ? a : b;
            JdbcLockClient other = i % 2 == 0 ? b : a;
            try (Lease lease = holder.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(lease.fencingToken()).isGreaterThan(lastToken);
                lastToken = lease.fencingToken();
                assertThat(other.lock(name).tryAcquire()).isEmpty();
                lease.checkValid();
            }
            assertThat(other.list()).anySatisfy(info -> assertThat(info.name()).isEqualTo(name));
        }
        assertThat(a.runOnce(name + "-run", Duration.ofSeconds(30), Duration.ofSeconds(10), () -> { })).isTrue();
        assertThat(b.runOnce(name + "-run", Duration.ofSeconds(30), Duration.ofSeconds(10), () -> { })).isFalse();
    }

    /**
     * Regression: the client {@code LISTEN}ed through the pooler, which left the {@code LISTEN} on a pooled server
     * session: every release notification went to whichever application connection used that session next.
     * Through PgBouncer a client must send no {@code LISTEN} at all, and its waiters still get released locks
     * (by polling).
     */
    @Test
    void throughPgBouncerTheClientSendsNoListenAndAnUnrelatedConnectionGetsNoNotification() throws Exception {
        String table = "baton_bouncer_nolisten";
        // a LISTEN left on a pooled server session by an earlier run of broken code would stay there for good
        onEveryServerSession(() -> { }, "UNLISTEN " + table + "_released");
        SqlRecordingDataSource recorded = new SqlRecordingDataSource(bouncer(""));
        JdbcLockClient holder = client(JdbcLocks.builder(pool(recorded)).tableName(table).createTableIfMissing());
        JdbcLockClient waiter = client(JdbcLocks.builder(pool(recorded)).tableName(table));
        String name = "bouncer-nolisten-" + System.nanoTime();
        for (int i = 0; i < 5; i++) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
                try (Lease l = waiter.lock(name).acquire(Duration.ofSeconds(10))) {
                    return l.fencingToken();
                }
            });
            held.close();
            assertThat(next.get(15, TimeUnit.SECONDS)).as("the waiter polls").isGreaterThan(held.fencingToken());
        }
        List<String> sent = recorded.sql();
        // where would a LISTEN through the pooler have gone? Pin every server session and notify the channel
        // directly: a server session that LISTENs hands it to whichever unrelated connection pinned it
        int notified = onEveryServerSession(() -> {
            try (Connection admin = direct().getConnection();
                 java.sql.PreparedStatement ps = admin.prepareStatement("SELECT pg_notify(?, ?)")) {
                ps.setString(1, table + "_released");
                ps.setString(2, name);
                ps.execute();
            }
        }, null);
        System.out.printf("[pgbouncer] unrelated pooled connections received %d notification(s) of the lock table%n",
                notified);
        assertThat(notified).as("notifications unrelated pooled connections received").isZero();
        assertThat(sent).as("SQL sent through PgBouncer").noneMatch(sql -> sql.strip().toUpperCase().startsWith("LISTEN"));
    }

    private interface SqlAction {
        void run() throws Exception;
    }

    /**
     * Pins every server session of PgBouncer's pool ({@code default_pool_size = 5} in scripts/start-servers.sh)
     * with an open transaction on an unrelated connection each (running {@code sql} there, if given), runs
     * {@code action}, ends the transactions and returns how many notifications those connections received.
     */
    private static int onEveryServerSession(SqlAction action, String sql) throws Exception {
        int notified = 0;
        List<Connection> unrelated = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                Connection c = bouncer("&prepareThreshold=0").getConnection(); // the test's own: no named statements
                unrelated.add(c);
                c.setAutoCommit(false);
                try (Statement st = c.createStatement()) {
                    st.execute(sql == null ? "SELECT 1" : sql);
                }
            }
            action.run();
            for (Connection c : unrelated) {
                c.commit();
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT 1");
                }
                c.commit();
                PGNotification[] notes = c.unwrap(PGConnection.class).getNotifications();
                notified += notes == null ? 0 : notes.length;
            }
        } finally {
            for (Connection c : unrelated) {
                c.close();
            }
        }
        return notified;
    }

    /** With a direct notification data source, a waiter in another client is woken by NOTIFY, not by its poll. */
    @Test
    void aDirectNotificationDataSourceWakesWaitersThroughPgBouncerAtOnce() throws Exception {
        String table = "baton_bouncer_notify";
        SqlRecordingDataSource recorded = new SqlRecordingDataSource(bouncer(""));
        // long lease and long poll: only a notification can wake the waiter within the bound below
        JdbcLocks.Builder slow = JdbcLocks.builder(pool(recorded)).tableName(table).createTableIfMissing()
                .leaseTime(Duration.ofSeconds(60)).minPollInterval(Duration.ofSeconds(30))
                .maxPollInterval(Duration.ofSeconds(30)).notificationDataSource(direct());
        JdbcLockClient holder = client(slow);
        JdbcLockClient waiter = client(slow);
        String name = "bouncer-notify-" + System.nanoTime();
        Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
        CompletableFuture<Long> acquired = CompletableFuture.supplyAsync(() -> {
            try (Lease l = waiter.lock(name).acquire(Duration.ofSeconds(50))) {
                return System.nanoTime();
            }
        });
        Thread.sleep(500); // let the waiter's first attempt find the lock held (if it comes later, it just gets it)
        long released = System.nanoTime();
        held.close();
        long ms = TimeUnit.NANOSECONDS.toMillis(acquired.get(50, TimeUnit.SECONDS) - released);
        System.out.printf("[pgbouncer + direct notificationDataSource] release-to-acquire: %d ms (poll 30 s)%n", ms);
        assertThat(ms).as("woken by NOTIFY on the direct connection").isLessThan(5_000);
        assertThat(recorded.sql()).noneMatch(sql -> sql.strip().toUpperCase().startsWith("LISTEN"));
    }

    @Test
    void aNotificationDataSourceIsRefusedWhereNothingListens() {
        assertThatThrownBy(() -> JdbcLocks.builder(TxDatabase.sqlite().raw("")).tableName("baton_bouncer_notify")
                .createTableIfMissing()
                .notificationDataSource(direct()).build())
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.LockConfigurationException.class)
                .hasMessage("notificationDataSource is used only by the lease strategy on PostgreSQL (LISTEN/NOTIFY);"
                        + " this client is the lease strategy on sqlite");
        assertThatThrownBy(() -> JdbcLocks.builder(direct()).tableName("baton_bouncer_notify").createTableIfMissing()
                .strategy(Strategy.SESSION).notificationDataSource(direct()).build())
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.LockConfigurationException.class)
                .hasMessage("notificationDataSource is used only by the lease strategy on PostgreSQL (LISTEN/NOTIFY);"
                        + " this client is the session strategy on postgresql");
    }

    @Test
    void aNotificationDataSourceThroughThePoolerIsRefused() {
        assertThatThrownBy(() -> JdbcLocks.builder(direct()).tableName("baton_bouncer_notify").createTableIfMissing()
                .notificationDataSource(bouncer("")).build())
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.LockConfigurationException.class)
                .hasMessageContaining("notificationDataSource passes through a pooler");
    }
    private static PGSimpleDataSource viaPgBouncer() {
        TestServers.require("PgBouncer (transaction mode, in front of PostgreSQL)", "127.0.0.1", 6432);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        // prepareThreshold=0: named server-side statements do not survive transaction pooling
        ds.setURL("jdbc:postgresql://127.0.0.1:6432/test?user=postgres&prepareThreshold=0");
        return ds;
    }

    @Test
    void theSessionStrategyRefusesAPoolerInTransactionMode() {
        // the tables exist already: create them directly, as an operator would with the shipped DDL
        PGSimpleDataSource direct = new PGSimpleDataSource();
        direct.setURL(PostgresFixture.ADMIN_URL);
        JdbcLocks.builder(direct).tableName("baton_bouncer").strategy(Strategy.SESSION).createTableIfMissing()
                .build().close();
        assertThatThrownBy(() -> JdbcLocks.builder(viaPgBouncer()).tableName("baton_bouncer")
                .strategy(Strategy.SESSION).build())
                .isInstanceOf(LockException.class)
                .isInstanceOf(dev.baton.UnsupportedBackendException.class)
                .hasMessageContaining("pooler in transaction")
                .hasMessageContaining("lease strategy");
    }

    @Test
    void theLeaseStrategyWorksThroughIt() {
        try (JdbcLockClient locks = JdbcLocks.builder(viaPgBouncer()).tableName("baton_bouncer")
                .createTableIfMissing().build(); JdbcLockClient other = JdbcLocks.builder(viaPgBouncer())
                .tableName("baton_bouncer").build()) {
            String name = "bouncer-" + System.nanoTime();
            try (Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(other.lock(name).tryAcquire()).isEmpty();
                assertThat(lease.isValid()).isTrue();
            }
            assertThat(other.lock(name).tryAcquire()).isPresent().get().satisfies(Lease::close);
        }
    }
}
