package dev.baton.jdbc;

import dev.baton.Lease;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.LockTimeoutException;
import dev.baton.jdbc.fixtures.TxDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 8 item 8: one name is one lock whatever the strategy. The lease strategy and the session strategy
 * on the same table used to hold one name at once (two holders, two rows in {@code baton list}). Now the
 * lease table's primary key decides: the first strategy to use a name in a table owns it, and the other
 * strategy's use is refused loudly, naming the name, the table and the first strategy. Two separate clients
 * (own pools) each time, in both orders, on PostgreSQL, MariaDB and the MySQL dialect.
 */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OneNameTwoStrategiesIT {
    private final List<TxDatabase> dbs = new ArrayList<>();

    List<TxDatabase> databases() {
        if (dbs.isEmpty()) {
            dbs.add(TxDatabase.postgres());
            dbs.add(TxDatabase.mariadb());
            dbs.add(TxDatabase.mysqlDialect());
        }
        return dbs;
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    private static String table(TxDatabase db) {
        return db.dialect() == Dialect.MYSQL ? "baton_twostrat_my" : "baton_twostrat";
    }

    private static JdbcLockClient client(TxDatabase db, Strategy strategy) {
        return client(db, strategy, db.pool(4));
    }

    private static JdbcLockClient client(TxDatabase db, Strategy strategy, javax.sql.DataSource pool) {
        JdbcLocks.Builder b = JdbcLocks.builder(pool).tableName(table(db)).createTableIfMissing().strategy(strategy);
        if (db.dialect() == Dialect.MYSQL) {
            b.dialect(Dialect.MYSQL);
        }
        JdbcLockClient client = b.build();
        return client;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aNameHeldWithTheLeaseStrategyIsRefusedByTheSessionStrategy(TxDatabase db) {
        String name = TxDatabase.unique("lease-first");
        try (JdbcLockClient lease = client(db, Strategy.LEASE); JdbcLockClient session = client(db, Strategy.SESSION)) {
            Lease held = lease.lock(name).acquire(Duration.ofSeconds(5));
            assertThatThrownBy(() -> session.lock(name).tryAcquire())
                    .isExactlyInstanceOf(StrategyConflictException.class)
                    .hasMessageContaining("lock '" + name + "' is used with the lease strategy in table " + table(db))
                    .hasMessageContaining("one name is one lock");
            assertThatThrownBy(() -> session.lock(name).acquire(Duration.ofSeconds(30)))
                    .as("refused at once, not a wait for the lease").isExactlyInstanceOf(StrategyConflictException.class);
            assertThat(held.isValid()).isTrue();
            held.close();
            assertThatThrownBy(() -> session.lock(name).tryAcquire())
                    .as("a released lease row still belongs to the lease strategy")
                    .isExactlyInstanceOf(StrategyConflictException.class).hasMessageContaining("lease strategy");
            try (Lease again = lease.lock(name).tryAcquire().orElseThrow()) {
                assertThat(again.isValid()).as("the lease strategy keeps working").isTrue();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aNameUsedWithTheSessionStrategyIsRefusedByTheLeaseStrategyAndRunOnce(TxDatabase db) {
        String name = TxDatabase.unique("session-first");
        try (JdbcLockClient session = client(db, Strategy.SESSION); JdbcLockClient lease = client(db, Strategy.LEASE)) {
            Lease held = session.lock(name).acquire(Duration.ofSeconds(5));
            assertThatThrownBy(() -> lease.lock(name).tryAcquire())
                    .isExactlyInstanceOf(StrategyConflictException.class)
                    .hasMessageContaining("lock '" + name + "' is used with the session strategy in table " + table(db))
                    .hasMessageContaining("one name is one lock");
            assertThatThrownBy(() -> lease.lock(name).acquire(Duration.ofSeconds(30)))
                    .as("refused at once, not a wait that can never end").isExactlyInstanceOf(StrategyConflictException.class);
            assertThatThrownBy(() -> lease.runOnce(name, Duration.ofSeconds(10), Duration.ofMillis(1), () -> { }))
                    .as("runOnce refuses too, instead of returning false forever")
                    .isExactlyInstanceOf(StrategyConflictException.class).hasMessageContaining("session strategy");
            held.close();
            assertThatThrownBy(() -> lease.lock(name).tryAcquire())
                    .as("a free session lock still belongs to the session strategy")
                    .isExactlyInstanceOf(StrategyConflictException.class);
            try (Lease again = session.lock(name).tryAcquire().orElseThrow()) {
                assertThat(again.isValid()).as("the session strategy keeps working").isTrue();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void theSessionStrategysRowIsNeitherListedAsALeaseNorPurged(TxDatabase db) {
        String name = TxDatabase.unique("listed-once");
        try (JdbcLockClient session = client(db, Strategy.SESSION); JdbcLockClient lease = client(db, Strategy.LEASE)) {
            try (Lease held = session.lock(name).acquire(Duration.ofSeconds(5))) {
                List<LockInfo> all = new ArrayList<>(lease.list());
                all.addAll(session.list());
                assertThat(all.stream().filter(i -> i.name().equals(name)))
                        .as("what `baton list` shows for the name: the session lock, once").hasSize(1)
                        .allSatisfy(i -> assertThat(i.expiresAt()).as("a session lock").isNull());
                assertThat(held.isValid()).isTrue();
            }
            lease.purgeExpired(Duration.ofSeconds(1));
            assertThatThrownBy(() -> lease.lock(name).tryAcquire()).as("still the session strategy's after a purge")
                    .isExactlyInstanceOf(StrategyConflictException.class);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void theSessionStrategysClaimIsCommittedOnAPoolThatDefaultsToAutoCommitOff(TxDatabase db) {
        String name = TxDatabase.unique("claim-autocommit-off");
        com.zaxxer.hikari.HikariConfig hc = new com.zaxxer.hikari.HikariConfig();
        hc.setDataSource(db.raw(""));
        hc.setMaximumPoolSize(4);
        hc.setAutoCommit(false); // the pool rolls back what was not committed when a connection returns
        try (var manual = new com.zaxxer.hikari.HikariDataSource(hc);
             JdbcLockClient session = client(db, Strategy.SESSION, manual); JdbcLockClient lease = client(db, Strategy.LEASE);
             Lease held = session.lock(name).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> lease.lock(name).tryAcquire()).as("the marker row survived the pool's rollback")
                    .isExactlyInstanceOf(StrategyConflictException.class).hasMessageContaining("session strategy");
            assertThat(held.isValid()).isTrue();
        }
    }

    /** Both strategies try the same fresh name at the same instant: one wins, the other is refused, never both. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void racingStrategiesNeverBothHoldAName(TxDatabase db) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        int leaseWins = 0;
        int sessionWins = 0;
        try (JdbcLockClient session = client(db, Strategy.SESSION); JdbcLockClient lease = client(db, Strategy.LEASE)) {
            for (int round = 0; round < 20; round++) {
                String name = TxDatabase.unique("race");
                CyclicBarrier start = new CyclicBarrier(2);
                Callable<Optional<Lease>> viaLease = () -> attempt(start, () -> lease.lock(name).acquire(Duration.ofSeconds(2)));
                Callable<Optional<Lease>> viaSession = () -> attempt(start, () -> session.lock(name).acquire(Duration.ofSeconds(2)));
                Future<Optional<Lease>> l = pool.submit(viaLease);
                Future<Optional<Lease>> s = pool.submit(viaSession);
                Optional<Lease> byLease = l.get(30, TimeUnit.SECONDS);
                Optional<Lease> bySession = s.get(30, TimeUnit.SECONDS);
                assertThat(byLease.isPresent() && bySession.isPresent()).as("both strategies hold '%s'", name).isFalse();
                assertThat(byLease.isPresent() || bySession.isPresent()).as("one of them holds '%s'", name).isTrue();
                leaseWins += byLease.isPresent() ? 1 : 0;
                sessionWins += bySession.isPresent() ? 1 : 0;
                byLease.ifPresent(Lease::close);
                bySession.ifPresent(Lease::close);
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.printf("%s: 20 races of one fresh name, lease won %d, session won %d, never both%n",
                db, leaseWins, sessionWins);
    }

    private static Optional<Lease> attempt(CyclicBarrier start, Callable<Lease> acquire) throws Exception {
        start.await(10, TimeUnit.SECONDS);
        try {
            return Optional.of(acquire.call());
        } catch (LockTimeoutException e) {
            throw new AssertionError("a strategy waited instead of being refused: " + e.getMessage(), e);
        } catch (LockException e) {
            assertThat(e.getMessage()).contains("one name is one lock");
            return Optional.empty();
        }
    }
}
