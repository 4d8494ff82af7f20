package dev.baton.jdbc.session;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.Lease;
import dev.baton.UnsupportedBackendException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import dev.baton.jdbc.fixtures.PgBouncerFixture;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.jdbc.internal.SessionKeys;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many session clients built at once through the real PgBouncer in transaction mode (127.0.0.1:6432), each over a
 * small HikariCP pool as {@code baton run --strategy session} builds it: every build is refused before its first
 * lock, and no advisory lock of the test's names is left on any server session (a lock taken on a pooled server
 * session stays there after its client has gone).
 */
@ResourceLock(PgBouncerFixture.POOL_LOCK) // PgBouncer's five server sessions (see PgBouncerFixture.POOL_LOCK)
class PgBouncerSessionRaceIT {
    private static final String TABLE = "baton_bouncer_race";
    private static final String URL = "jdbc:postgresql://127.0.0.1:6432/test?user=postgres";
    private static final int BUILDS = 30;
    private static final int AT_ONCE = 6;

    @Test
    void everySessionClientBuiltThroughPgBouncerAtTheSameTimeIsRefusedBeforeItsFirstLock() throws Exception {
        TestServers.require("PgBouncer (transaction mode, in front of PostgreSQL)", "127.0.0.1", 6432);
        PGSimpleDataSource direct = new PGSimpleDataSource();
        direct.setURL(PostgresFixture.ADMIN_URL);
        JdbcLocks.builder(direct).tableName(TABLE).strategy(Strategy.SESSION).createTableIfMissing().build().close();
        ConcurrentLinkedQueue<String> passed = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        // names of this run only: a lock an earlier run left on a pooled server session stays until PgBouncer
        // closes that server connection
        String run = Long.toString(System.nanoTime(), 36);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < BUILDS; i++) {
            names.add("bouncer-race-" + run + "-" + i);
        }
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < AT_ONCE; t++) {
            int first = t;
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    for (int i = first; i < BUILDS; i += AT_ONCE) {
                        buildOnce(names.get(i), passed, unexpected);
                    }
                } catch (Throwable e) {
                    unexpected.add(e);
                }
            }, "bouncer-race-" + t);
            thread.start();
            threads.add(thread);
        }
        start.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.MINUTES.toMillis(2));
            assertThat(t.isAlive()).as("a thread still builds after 2 minutes").isFalse();
        }
        List<String> left = advisoryLocksLeft(names);
        assertThat(unexpected).as("failures other than the pooler refusal").isEmpty();
        assertThat(passed).as("builds of %d through PgBouncer that were not refused (and the lock each then took)",
                BUILDS).isEmpty();
        assertThat(left).as("advisory locks of the test's names still held on server sessions").isEmpty();
    }

    /** One build over a pool of its own; if it is not refused, one lock taken and released, then closed. */
    private static void buildOnce(String name, ConcurrentLinkedQueue<String> passed,
                                  ConcurrentLinkedQueue<Throwable> unexpected) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(URL);
        hc.setMaximumPoolSize(4);
        hc.setMinimumIdle(0);
        hc.setConnectionTimeout(5000);
        try (HikariDataSource pool = new HikariDataSource(hc)) {
            JdbcLockClient client;
            try {
                client = JdbcLocks.builder(pool).tableName(TABLE).strategy(Strategy.SESSION).build();
            } catch (UnsupportedBackendException e) {
                if (!e.getMessage().contains("pooler")) {
                    unexpected.add(e);
                }
                return;
            }
            try (client) {
                Optional<Lease> lease = client.lock(name).tryAcquire();
                passed.add(name + (lease.isPresent() ? " (lock taken)" : " (lock busy)"));
                lease.ifPresent(Lease::close);
            } catch (RuntimeException e) {
                passed.add(name + " (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
            }
        } catch (RuntimeException e) {
            unexpected.add(e);
        }
    }

    /** The names of {@code names} whose advisory lock some server session holds now (read directly). */
    private static List<String> advisoryLocksLeft(List<String> names) throws Exception {
        SessionKeys keys = new SessionKeys(TABLE);
        List<String> left = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(PostgresFixture.ADMIN_URL);
             PreparedStatement ps = c.prepareStatement("SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory'"
                     + " AND l.granted AND l.objsubid = 1 AND l.classid::bigint = ? AND l.objid::bigint = ?")) {
            for (String name : names) {
                long k = keys.pgKey(name);
                ps.setLong(1, k >>> 32);
                ps.setLong(2, k & 0xFFFFFFFFL);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        left.add(name + " (server pid " + rs.getInt(1) + ")");
                    }
                }
            }
        }
        return left;
    }
}
