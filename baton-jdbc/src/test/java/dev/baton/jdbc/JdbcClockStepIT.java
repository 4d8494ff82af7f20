package dev.baton.jdbc;

import dev.baton.Lease;
import dev.baton.LockLostException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A database server whose clock steps forward ends every lease early: {@code expires_at} is a time on the server's
 * clock, so a step of S brings each row's end S closer, and a client that still counts on its local deadline would
 * believe in a grant the server may already give to another. A test cannot step the shared servers' clocks, but it
 * can do to one row what the step does to all: shorten its {@code expires_at}. The holder's next renewal must find
 * less time left than it counted on and report the lease lost (one renewal interval, 1 s), not renew it silently.
 * Lease 10 s: the tests allow 3 s, far inside the 9.9 s of local validity.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcClockStepIT {
    private static final Duration LEASE = Duration.ofSeconds(10);
    private static final Duration BOUND = Duration.ofSeconds(3);
    private final List<TxDatabase> dbs = new ArrayList<>();

    List<TxDatabase> databases() {
        if (dbs.isEmpty()) {
            dbs.addAll(List.of(TxDatabase.postgres(), TxDatabase.mariadb(), TxDatabase.mysqlDialect(),
                    TxDatabase.sqlite()));
        }
        return dbs;
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aRenewalThatFindsTheRowEndingBeforeItsLocalDeadlineLosesTheLease(TxDatabase db) {
        String name = TxDatabase.unique("clock-step");
        JdbcLocks.Builder b = JdbcLocks.builder(db.pool(3)).tableName(db.table()).createTableIfMissing()
                .leaseTime(LEASE).renewInterval(Duration.ofSeconds(1));
        if (db.dialect() == Dialect.MYSQL) {
            b.dialect(Dialect.MYSQL);
        }
        try (JdbcLockClient locks = b.build(); Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5))) {
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            // what a 4 s step forward of the server's clock does to the row: it ends 6 s from now, not 10 s
            db.exec("UPDATE " + db.table() + " SET expires_at = " + nowPlusSixSeconds(db.dialect())
                    + " WHERE name = '" + name + "'");
            long stepped = System.nanoTime();
            await().atMost(BOUND).untilAsserted(() -> assertThat(lease.isValid())
                    .as("isValid() %d ms after the step", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stepped))
                    .isFalse());
            assertThat(lost).isCompleted();
            assertThat(lost.join().getMessage()).contains("left on the grant").contains("clock jumped forward");
        }
    }

    private static String nowPlusSixSeconds(Dialect dialect) {
        return switch (dialect) {
            case POSTGRESQL -> "now() + interval '6 seconds'";
            case MARIADB, MYSQL -> "UTC_TIMESTAMP(6) + INTERVAL 6 SECOND";
            case SQLITE -> "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) + 6000";
        };
    }
}
