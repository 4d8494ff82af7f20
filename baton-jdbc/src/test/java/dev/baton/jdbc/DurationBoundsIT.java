package dev.baton.jdbc;

import dev.baton.Lease;
import dev.baton.jdbc.fixtures.TxDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 8 item 11: every duration of the JDBC API is bounded with a message naming the setting, the value
 * and the bound, and a huge wait means "as long as it takes" — never an {@link ArithmeticException}, never
 * a lock row that outlives its holder by centuries.
 */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DurationBoundsIT {
    private static final Duration THREE_MILLION_HOURS = Duration.ofHours(3_000_000);
    private static final Duration LONGEST = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
    private final List<TxDatabase> dbs = new ArrayList<>();

    List<TxDatabase> databases() {
        if (dbs.isEmpty()) {
            dbs.addAll(TxDatabase.all());
        }
        return dbs;
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aLeaseTimeOfThreeMillionHoursIsRefusedByTheBuilderNotAnOverflowInBuild(TxDatabase db) {
        var pool = db.pool(2);
        assertThatThrownBy(() -> JdbcLocks.builder(pool).tableName(db.table()).leaseTime(THREE_MILLION_HOURS).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("leaseTime must be at most 7 days (PT168H), was PT3000000H: a holder that vanishes keeps"
                        + " its locks for up to one lease time");
        assertThatThrownBy(() -> JdbcLocks.builder(pool).renewInterval(LONGEST))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("renewInterval must be at most 7 days");
        assertThatThrownBy(() -> JdbcLocks.builder(pool).sessionKeepalive(Duration.ofDays(1), Duration.ofSeconds(10), 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keepalive idle must be at most 32767 s (PT9H6M7S), was PT24H");
        assertThatThrownBy(() -> JdbcLocks.builder(pool).sessionKeepalive(Duration.ofSeconds(30), LONGEST, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keepalive interval must be at most");
        assertThatThrownBy(() -> JdbcLocks.builder(pool).sessionKeepalive(Duration.ofSeconds(30), Duration.ofSeconds(10), 1000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keepalive count must be at least 1 and at most 127").hasMessageContaining("was 1000");
        // the bound itself works end to end
        try (JdbcLockClient locks = JdbcLocks.builder(pool).tableName(db.table()).createTableIfMissing()
                .dialect(db.dialect()).leaseTime(Duration.ofDays(7)).build();
             Lease lease = locks.lock(TxDatabase.unique("week")).acquire(Duration.ofSeconds(5))) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void runOnceRefusesAtMostForAndAtLeastForBeyondSevenDays(TxDatabase db) {
        JdbcLockClient locks = db.client(db.pool(2));
        String name = TxDatabase.unique("run-bounds");
        Runnable task = () -> { };
        assertThatThrownBy(() -> locks.runOnce(name, THREE_MILLION_HOURS, Duration.ofSeconds(1), task))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("atMostFor must be at most 7 days (PT168H), was PT3000000H");
        assertThatThrownBy(() -> locks.runOnce(name, LONGEST, LONGEST, task))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atMostFor must be at most 7 days");
        assertThatThrownBy(() -> locks.runOnce(name, Duration.ofDays(7), Duration.ofDays(8), task))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atLeastFor must be at most 7 days");
        assertThat(locks.list()).as("no row was written").noneMatch(i -> i.name().equals(name));
        assertThat(locks.runOnce(name, Duration.ofDays(7), Duration.ofMillis(1), task)).as("the bound itself").isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void purgeExpiredRefusesAnAgeBeyondTenYears(TxDatabase db) {
        JdbcLockClient locks = db.client(db.pool(2));
        assertThatThrownBy(() -> locks.purgeExpired(LONGEST))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("olderThan must be at most 3650 days");
        assertThatThrownBy(() -> locks.purgeExpired(THREE_MILLION_HOURS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("olderThan must be at most 3650 days (PT87600H), was PT3000000H");
        assertThat(locks.purgeExpired(Duration.ofDays(3650))).as("the bound itself").isGreaterThanOrEqualTo(0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aHugeWaitWaitsAsLongAsItTakes(TxDatabase db) throws Exception {
        JdbcLockClient a = db.client(db.pool(2));
        JdbcLockClient b = db.client(db.pool(2));
        String name = TxDatabase.unique("huge-wait");
        try (Lease free = a.lock(name).acquire(LONGEST)) {
            assertThat(free.isValid()).as("a free lock").isTrue();
        }
        assertThat(a.<Integer>withLock(name, THREE_MILLION_HOURS, () -> 7)).isEqualTo(7);
        Long inTx = a.inTransaction(name, LONGEST, (c, lease) -> lease.fencingToken());
        assertThat(inTx).isPositive();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Lease held = a.lock(name).acquire(Duration.ofSeconds(5));
            CountDownLatch started = new CountDownLatch(2);
            Future<Long> waiter = pool.submit(() -> {
                started.countDown();
                try (Lease l = b.lock(name).acquire(LONGEST)) {
                    return l.fencingToken();
                }
            });
            Future<Boolean> viaView = pool.submit(() -> {
                started.countDown();
                Lock view = b.lock(name).asLock();
                boolean got = view.tryLock(Long.MAX_VALUE, TimeUnit.DAYS);
                if (got) {
                    view.unlock();
                }
                return got;
            });
            started.await();
            long token = held.fencingToken();
            held.close();
            assertThat(waiter.get(20, TimeUnit.SECONDS)).isGreaterThan(token);
            assertThat(viaView.get(20, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }
}
