package dev.baton.jdbc.lease;

import dev.baton.Lease;
import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.fixtures.MariaDbFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * MariaDB's release writes the lease's token to {@code <table>_released}, a MEMORY table, instead of updating the
 * InnoDB row: no redo-log flush. What that costs and what it keeps: a restart forgets releases (each such lock is
 * held until its lease ends, never given to two), and a full table of releases falls back to the durable write.
 *
 * <p>Isolated: {@link #aMariaDbReleaseIsNotFlushedToTheRedoLog} counts InnoDB fsyncs on the server's global counter,
 * to which every other class writing to MariaDB at the same time would add its own.
 */
@Isolated
class MariaDbReleaseIT {
    private static final String URL = MariaDbFixture.ADMIN_URL;

    private static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    private static com.zaxxer.hikari.HikariDataSource pool() {
        new MariaDbFixture(); // fails naming the server and the script that starts it if it is down
        com.zaxxer.hikari.HikariConfig hc = new com.zaxxer.hikari.HikariConfig();
        hc.setJdbcUrl(URL);
        hc.setMaximumPoolSize(4);
        return new com.zaxxer.hikari.HikariDataSource(hc);
    }

    private static long fsyncs(Connection admin) throws SQLException {
        try (Statement st = admin.createStatement(); ResultSet rs = st.executeQuery("SELECT VARIABLE_VALUE FROM"
                + " information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_DATA_FSYNCS'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Twenty releases cost fewer than ten InnoDB fsyncs (a durable release costs one each: twenty, every time).
     * Counted on the server's global counter, so a background flush may add a few: up to three rounds, one must
     * stay under ten. The grants before are flushed.
     */
    @Test
    void aMariaDbReleaseIsNotFlushedToTheRedoLog() throws Exception {
        try (var pool = pool(); Connection admin = DriverManager.getConnection(URL);
             JdbcLockClient locks = JdbcLocks.builder(pool).tableName("baton_unflushed").createTableIfMissing()
                     .build()) {
            try (Statement st = admin.createStatement();
                 ResultSet rs = st.executeQuery("SELECT @@innodb_flush_log_at_trx_commit")) {
                rs.next();
                assertThat(rs.getInt(1)).as("innodb_flush_log_at_trx_commit: 1 (scripts/start-servers.sh), else"
                        + " no commit is flushed and this test cannot tell").isEqualTo(1);
            }
            List<Long> rounds = new ArrayList<>();
            for (int round = 0; round < 3 && (rounds.isEmpty() || rounds.get(rounds.size() - 1) >= 10); round++) {
                List<Lease> held = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    held.add(locks.lock(unique("unflushed")).acquire(Duration.ofSeconds(5)));
                }
                long before = fsyncs(admin);
                held.forEach(Lease::close);
                rounds.add(fsyncs(admin) - before);
                try (Statement st = admin.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*)"
                        + " FROM baton_unflushed t JOIN baton_unflushed_released r ON r.token = t.token"
                        + " AND r.acquired_at = t.acquired_at WHERE t.owner IS NOT NULL AND t.token IN ("
                        + String.join(",", held.stream().map(l -> Long.toString(l.fencingToken())).toList()) + ")")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("releases recorded as entries, the rows untouched").isEqualTo(20);
                }
                for (Lease lease : held) {
                    Optional<Lease> again = locks.lock(lease.lockName()).tryAcquire();
                    assertThat(again).as("%s is free after its release", lease.lockName()).isPresent();
                    assertThat(again.get().fencingToken()).isGreaterThan(lease.fencingToken());
                    again.get().close();
                }
            }
            assertThat(rounds).as("InnoDB fsyncs during 20 releases, per round").anyMatch(n -> n < 10);
        }
    }

    /**
     * A forced release ({@code baton release}) writes the row free, as releases did before they became entries: a
     * client of an earlier version, which does not read the table of releases, must see it end too, or it would
     * renew and hold a lease that newer clients see free.
     */
    @Test
    void aForcedReleaseWritesTheRowFreeForClientsThatDoNotReadTheTableOfReleases() throws Exception {
        String name = unique("forced");
        try (var pool = pool(); Connection admin = DriverManager.getConnection(URL);
             JdbcLockClient a = JdbcLocks.builder(pool).tableName("baton_unflushed").createTableIfMissing().build();
             JdbcLockClient b = JdbcLocks.builder(pool).tableName("baton_unflushed").build()) {
            Lease held = a.lock(name).acquire(Duration.ofSeconds(5));
            assertThat(b.forceRelease(name, java.util.OptionalLong.empty())).isPresent();
            try (Statement st = admin.createStatement(); ResultSet rs = st.executeQuery("SELECT owner IS NULL,"
                    + " expires_at <= UTC_TIMESTAMP(6) FROM baton_unflushed WHERE name = '" + name + "'")) {
                rs.next();
                assertThat(rs.getBoolean(1)).as("no owner in the row").isTrue();
                assertThat(rs.getBoolean(2)).as("expired in the row").isTrue();
            }
            assertThatThrownBy(held::checkValid).as("the holder, asking the server").isInstanceOf(
                    dev.baton.LockLostException.class);
            held.close();
        }
    }

    /** {@code purgeExpired} deletes the entries that free nothing any more (their leases ended). */
    @Test
    void purgeExpiredDeletesTheEntriesOfEndedLeases() throws Exception {
        String name = unique("purged-entry");
        try (var pool = pool(); Connection admin = DriverManager.getConnection(URL);
             JdbcLockClient locks = JdbcLocks.builder(pool).tableName("baton_unflushed").createTableIfMissing()
                     .build()) {
            Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5));
            lease.close();
            String entry = "SELECT COUNT(*) FROM baton_unflushed_released WHERE token = " + lease.fencingToken();
            assertThat(count(admin, entry)).as("the release's entry").isEqualTo(1);
            try (Statement st = admin.createStatement()) { // the lease ends, as by the passing of its time
                st.executeUpdate("UPDATE baton_unflushed SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND"
                        + " WHERE name = '" + name + "'");
            }
            locks.purgeExpired(Duration.ofHours(1));
            assertThat(count(admin, entry)).as("the entry, once its lease ended").isZero();
        }
    }

    private static int count(Connection admin, String sql) throws SQLException {
        try (Statement st = admin.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /**
     * A restart empties the MEMORY table of releases (here: deleted by hand, as a restart would): the released lease
     * counts as held again until it ends, by the database clock, and only then goes to the next holder.
     */
    @Test
    void aReleaseTheServerForgotKeepsTheLockUntilItsLeaseEndsAndNeverGivesItToTwo() throws Exception {
        String name = unique("forgotten");
        try (var pool = pool(); Connection admin = DriverManager.getConnection(URL);
             JdbcLockClient a = JdbcLocks.builder(pool).tableName("baton_forgot").createTableIfMissing()
                     .leaseTime(Duration.ofSeconds(5)).build();
             JdbcLockClient b = JdbcLocks.builder(pool).tableName("baton_forgot").build()) {
            Lease first = a.lock(name).acquire(Duration.ofSeconds(5));
            first.close();
            LockInfo released = info(b, name);
            assertThat(released.held()).as("listed as free after the release").isFalse();
            try (Statement st = admin.createStatement()) {
                st.executeUpdate("DELETE FROM baton_forgot_released");
            }
            LockInfo forgotten = info(b, name);
            assertThat(forgotten.held()).as("held again once the release is forgotten").isTrue();
            assertThat(forgotten.fencingToken()).isEqualTo(first.fencingToken());
            assertThat(b.lock(name).tryAcquire()).as("not free before the lease ends").isEmpty();
            try (Lease second = b.lock(name).acquire(Duration.ofSeconds(20))) {
                assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
                Instant grantedAt = info(b, name).acquiredAt();
                assertThat(grantedAt).as("granted once the forgotten lease ended")
                        .isAfterOrEqualTo(forgotten.expiresAt());
            }
        }
    }

    /**
     * Regression (found in review): the upsert took a row as its own when the row's token equalled the value it had
     * just drawn, so a sequence set back (restarted, recreated, restored) let a second owner overwrite a live lease
     * and be told it holds it. A sequence set back may make tokens repeat; it must never make two holders.
     */
    @Test
    void aSequenceSetBackNeverGivesAHeldLockToASecondOwner() throws Exception {
        String name = unique("set-back");
        try (var pool = pool(); Connection admin = DriverManager.getConnection(URL);
             JdbcLockClient a = JdbcLocks.builder(pool).tableName("baton_setback").createTableIfMissing().build();
             Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
            for (long next = Math.max(1, held.fencingToken() - 1); next <= held.fencingToken() + 1; next++) {
                try (Statement st = admin.createStatement()) {
                    st.execute("ALTER SEQUENCE baton_setback_token_seq RESTART WITH " + next);
                }
                // a new client each time: its first attempt goes straight to the grant (no look first)
                try (JdbcLockClient b = JdbcLocks.builder(pool).tableName("baton_setback").build()) {
                    assertThat(b.lock(name).tryAcquire()).as("a second owner, the sequence restarted at %d (held: %d)",
                            next, held.fencingToken()).isEmpty();
                }
                assertThat(held.isValid()).isTrue();
                held.checkValid();
            }
        }
    }

    /**
     * An entry names its grant by token and {@code acquired_at}: after a sequence set back, a later grant that drew
     * the token of a released one again is still held.
     */
    @Test
    void aReleaseNeverFreesALaterGrantThatDrewTheSameTokenAgain() throws Exception {
        String name = unique("same-token");
        try (var pool = pool(); Connection admin = DriverManager.getConnection(URL);
             JdbcLockClient a = JdbcLocks.builder(pool).tableName("baton_setback").createTableIfMissing().build();
             JdbcLockClient b = JdbcLocks.builder(pool).tableName("baton_setback").build();
             JdbcLockClient c = JdbcLocks.builder(pool).tableName("baton_setback").build()) {
            long first;
            try (Lease lease = a.lock(name).acquire(Duration.ofSeconds(5))) {
                first = lease.fencingToken();
            }
            try (Statement st = admin.createStatement()) {
                st.execute("ALTER SEQUENCE baton_setback_token_seq RESTART WITH " + first);
            }
            try (Lease again = b.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(again.fencingToken()).as("the token drawn again").isEqualTo(first);
                assertThat(c.lock(name).tryAcquire()).as("the earlier release does not free it").isEmpty();
                assertThat(info(c, name).held()).isTrue();
                again.checkValid();
            }
        }
    }

    /** Threads of several clients trying a name never used at once: exactly one is granted, each time. */
    @Test
    void oneOfManyFirstAttemptsAtANewNameIsGranted() throws Exception {
        int clients = 4;
        int threadsPerClient = 2;
        List<JdbcLockClient> all = new ArrayList<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(
                clients * threadsPerClient);
        try (var ds = pool()) {
            for (int i = 0; i < clients; i++) {
                all.add(JdbcLocks.builder(ds).tableName("baton_newname").createTableIfMissing().build());
            }
            for (int round = 0; round < 20; round++) {
                String name = unique("new-name");
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(
                        clients * threadsPerClient);
                List<java.util.concurrent.Future<Optional<Lease>>> tries = new ArrayList<>();
                for (JdbcLockClient client : all) {
                    for (int t = 0; t < threadsPerClient; t++) {
                        tries.add(pool.submit(() -> {
                            start.await(10, java.util.concurrent.TimeUnit.SECONDS);
                            return client.lock(name).tryAcquire();
                        }));
                    }
                }
                List<Lease> granted = new ArrayList<>();
                for (var f : tries) {
                    f.get(30, java.util.concurrent.TimeUnit.SECONDS).ifPresent(granted::add);
                }
                assertThat(granted).as("grants of %s", name).hasSize(1);
                granted.get(0).close();
            }
        } finally {
            pool.shutdownNow();
            all.forEach(JdbcLockClient::close);
        }
    }

    /**
     * A MariaDB schema made before releases had their own table is refused at {@code build()} naming the missing
     * table and the shipped DDL, and {@code createTableIfMissing()} adds it.
     */
    @Test
    void aMariaDbSchemaWithoutItsTableOfReleasesIsMissingSchemaNamingIt() throws Exception {
        String table = "baton_norel";
        try (var pool = pool(); Connection admin = DriverManager.getConnection(URL);
             Statement st = admin.createStatement()) {
            JdbcLocks.builder(pool).tableName(table).createTableIfMissing().build().close();
            st.execute("DROP TABLE " + table + "_released");
            assertThatThrownBy(() -> JdbcLocks.builder(pool).tableName(table).build())
                    .isInstanceOf(dev.baton.MissingSchemaException.class)
                    .hasMessageContaining(table + "_released")
                    .hasMessageContaining("/dev/baton/jdbc/schema/mariadb.sql");
            JdbcLocks.builder(pool).tableName(table).createTableIfMissing().build().close();
            try (JdbcLockClient locks = JdbcLocks.builder(pool).tableName(table).build()) {
                assertThat(releaseAndTakeAgain(locks)).isTrue();
            }
        }
    }

    /**
     * A full table of releases: a release first deletes the entries that free nothing any more (a lease since taken
     * again, or ended); if that makes no room (every entry frees a lease still unexpired), it frees the row by the
     * durable write. Either way the lock is free at once.
     */
    @Test
    void aFullTableOfReleasesStillReleasesAtOnce() throws Exception {
        String table = "baton_fullrel";
        try (Connection admin = DriverManager.getConnection(URL); Statement st = admin.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table + "_released");
            st.execute("SET SESSION max_heap_table_size = 16384");
            String ddl = dev.baton.jdbc.internal.Ddl.statements(Dialect.MARIADB.schemaResource(), table).stream()
                    .filter(sql -> sql.contains(table + "_released")).findFirst().orElseThrow();
            assertThat(ddl).contains("ENGINE = MEMORY");
            st.execute(ddl);
            try (var pool = pool();
                 JdbcLockClient locks = JdbcLocks.builder(pool).tableName(table).createTableIfMissing().build()) {
                // stale entries: they free nothing, so a full table makes room by deleting them
                int stale = fill(st, table + "_released", "SELECT -seq, UTC_TIMESTAMP(6) FROM seq_1_to_100000");
                assertThat(releaseAndTakeAgain(locks)).as("released once the stale entries are gone").isTrue();
                try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table + "_released")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("entries left of %s stale", stale).isLessThan(stale);
                }
                // live entries: released leases still unexpired, which nothing may delete
                st.execute("DELETE FROM " + table + "_released");
                st.execute("DELETE FROM " + table + " WHERE name LIKE 'live-%'");
                st.execute("INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                        + " SELECT CONCAT('live-', seq), 'someone', -seq, UTC_TIMESTAMP(6),"
                        + " UTC_TIMESTAMP(6) + INTERVAL 1 HOUR FROM seq_1_to_2000");
                int live = fill(st, table + "_released", "SELECT token, acquired_at FROM " + table
                        + " WHERE name LIKE 'live-%' ORDER BY token DESC");
                assertThat(live).as("the table is full of live entries").isLessThan(2000);
                String freed = releaseAndTakeAgainNaming(locks);
                assertThat(freed).as("released by the durable write").isNotNull();
                try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table + "_released")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("no live entry deleted").isEqualTo(live);
                }
                try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table + " WHERE name = '" + freed
                        + "' AND owner IS NULL")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("the row written free (the durable release)").isEqualTo(1);
                }
                assertThat(locks.list().stream().filter(i -> i.name().startsWith("live-") && !i.held()).count())
                        .as("the released leases the live entries name stay free").isEqualTo(live);
            } finally { // the junk rows and the small table go (the next run makes both again)
                st.execute("DELETE FROM " + table + " WHERE name LIKE 'live-%'");
                st.execute("DROP TABLE IF EXISTS " + table + "_released");
            }
        }
    }

    /** Inserts the rows of {@code select} one by one until the MEMORY table is full; returns how many fit. */
    private static int fill(Statement st, String target, String select) throws SQLException {
        List<Object[]> rows = new ArrayList<>();
        try (ResultSet rs = st.executeQuery(select + " LIMIT 2000")) {
            while (rs.next()) {
                rows.add(new Object[] {rs.getLong(1), rs.getString(2)});
            }
        }
        int fitted = 0;
        for (Object[] row : rows) {
            try {
                st.executeUpdate("INSERT INTO " + target + " (token, acquired_at, released_at) VALUES (" + row[0]
                        + ", '" + row[1] + "', UTC_TIMESTAMP(6))");
                fitted++;
            } catch (SQLException full) {
                assertThat(full.getErrorCode()).as("filling %s: %s", target, full.getMessage()).isEqualTo(1114);
                return fitted;
            }
        }
        throw new AssertionError(target + " took " + fitted + " rows and is still not full");
    }

    /** Acquires a new name, releases it, and reports whether another attempt gets it at once. */
    private static boolean releaseAndTakeAgain(JdbcLockClient locks) {
        return releaseAndTakeAgainNaming(locks) != null;
    }

    /**
     * Acquires a new name, releases it, takes it again at once and releases it again; returns the name, or null if
     * the second attempt did not get it.
     */
    private static String releaseAndTakeAgainNaming(JdbcLockClient locks) {
        String name = unique("full");
        Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5));
        lease.close();
        Optional<Lease> again = locks.lock(name).tryAcquire();
        again.ifPresent(Lease::close);
        return again.isPresent() ? name : null;
    }

    private static LockInfo info(JdbcLockClient client, String name) {
        return client.list().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
    }
}
