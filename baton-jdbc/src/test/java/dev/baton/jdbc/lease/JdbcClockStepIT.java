package dev.baton.jdbc.lease;

import dev.baton.Lease;
import dev.baton.LockLostException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.fixtures.TxDatabase;
import dev.baton.spi.LeaseKey;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

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
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
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

    private static JdbcLockClient client(TxDatabase db) {
        JdbcLocks.Builder b = JdbcLocks.builder(db.pool(3)).tableName(db.table()).createTableIfMissing()
                .leaseTime(LEASE).renewInterval(Duration.ofSeconds(1));
        if (db.dialect() == Dialect.MYSQL) {
            b.dialect(Dialect.MYSQL);
        }
        return b.build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aRenewalThatFindsTheRowEndingBeforeItsLocalDeadlineLosesTheLease(TxDatabase db) {
        String name = TxDatabase.unique("clock-step");
        try (JdbcLockClient locks = client(db); Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5))) {
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

    /**
     * The renewal that found too little time left renewed the row for a whole lease (10 s), held by nobody: its
     * holder was told the lease is lost. The client clears it at once, with the holder's owner- and token-checked
     * release, so another client takes the lock within a few seconds (the bound, 5 s, is half the lease the row
     * would otherwise keep). The lost lease stays open meanwhile: closing it would release the row anyway.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aLeaseLostToTheTimeLeftCheckIsClearedOnTheServer(TxDatabase db) {
        String name = TxDatabase.unique("clock-cleared");
        AtomicReference<Lease> next = new AtomicReference<>();
        try (JdbcLockClient a = client(db); JdbcLockClient b = client(db);
             Lease lease = a.lock(name).acquire(Duration.ofSeconds(5))) {
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            db.exec("UPDATE " + db.table() + " SET expires_at = " + nowPlusSixSeconds(db.dialect())
                    + " WHERE name = '" + name + "'");
            await().atMost(BOUND).until(lost::isDone);
            assertThat(lost.join().getMessage()).contains("left on the grant");
            long told = System.nanoTime();
            await("another client's tryAcquire of the lost grant's lock").atMost(Duration.ofSeconds(5)).until(() -> {
                Optional<Lease> taken = b.lock(name).tryAcquire();
                taken.ifPresent(next::set);
                return taken.isPresent();
            });
            System.out.printf("%s: lost grant cleared, another client took the lock %d ms after the loss%n", db,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - told));
            try (Lease taken = next.get()) {
                assertThat(taken.isValid()).isTrue();
                assertThat(taken.fencingToken()).isGreaterThan(lease.fencingToken());
            }
        }
    }

    /**
     * The clearing is owner- and token-checked: clearing a grant that is no longer on the row never ends the grant
     * that is (a later holder's, with a newer token; the same holder's key with another token; another owner). The
     * stale clears are sent from a backend of their own, followed by the clear of a grant that is on its row: the
     * backend clears lost grants one at a time, in order, so once that one is gone the stale ones have run.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void clearingALostGrantNeverEndsAnotherHoldersGrant(TxDatabase db) {
        String name = TxDatabase.unique("clock-other");
        String marker = TxDatabase.unique("clock-marker");
        try (JdbcLockClient a = client(db); JdbcLockClient b = client(db)) {
            LeaseKey earlier;
            try (Lease first = a.lock(name).acquire(Duration.ofSeconds(5))) {
                earlier = new LeaseKey(name, first.holderId(), first.fencingToken());
            }
            try (Lease held = b.lock(name).acquire(Duration.ofSeconds(5));
                 Lease markerLease = b.lock(marker).acquire(Duration.ofSeconds(5))) {
                JdbcLeaseBackend stale = JdbcLeaseBackend.create(db.pool(2), LeaseTable.of(db.dialect(), db.table()),
                        null);
                stale.start("stale-clearer");
                LeaseKey live = new LeaseKey(name, held.holderId(), held.fencingToken());
                LeaseKey markerKey = new LeaseKey(marker, markerLease.holderId(), markerLease.fencingToken());
                try {
                    assertThat(held.fencingToken()).isGreaterThan(earlier.token());
                    stale.lost(earlier); // the row was taken over since: a newer token, another owner
                    stale.lost(new LeaseKey(name, held.holderId(), held.fencingToken() - 1));
                    stale.lost(new LeaseKey(name, "someone-else#1", held.fencingToken()));
                    stale.lost(markerKey);
                    await("the clear of the grant on its row").atMost(Duration.ofSeconds(5))
                            .until(() -> !stale.confirm(markerKey));
                    assertThat(stale.confirm(live)).as("the live grant's row after the stale clears").isTrue();
                    assertThat(a.lock(name).tryAcquire()).as("another client's tryAcquire").isEmpty();
                    assertThat(held.isValid()).isTrue();
                    held.checkValid();
                } finally {
                    stale.close();
                }
            }
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
