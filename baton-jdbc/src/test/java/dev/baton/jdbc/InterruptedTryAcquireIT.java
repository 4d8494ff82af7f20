package dev.baton.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.baton.Lease;
import dev.baton.jdbc.fixtures.TxDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 8 item 9 against a real pool: HikariCP refuses to lend a connection to an interrupted thread when it
 * has to wait for one ("Interrupted during connection acquisition"), so a try-once on an interrupted thread
 * must hide the flag from the backend, not only skip its own check; so must {@code Lock.lock()}, which is not
 * interruptible, and a release. Each test empties the pool first, so the
 * borrow has to wait for a new connection.
 */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InterruptedTryAcquireIT {
    private final List<TxDatabase> dbs = new ArrayList<>();

    Stream<Arguments> cases() {
        if (dbs.isEmpty()) {
            dbs.add(TxDatabase.postgres());
            dbs.add(TxDatabase.mariadb());
        }
        return dbs.stream().flatMap(db -> Stream.of(Arguments.of(db, Strategy.LEASE), Arguments.of(db, Strategy.SESSION)));
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    /** Evicts the pool's idle connections (the test thread's interrupt flag is kept as it was). */
    private static void emptyIdle(HikariDataSource pool) {
        boolean interrupted = Thread.interrupted();
        try {
            pool.getHikariPoolMXBean().softEvictConnections();
            await().atMost(Duration.ofSeconds(5)).until(() -> pool.getHikariPoolMXBean().getIdleConnections() == 0);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void tryAcquireLockAndReleaseOnAnInterruptedThreadWorkWhenThePoolMustOpenAConnection(TxDatabase db, Strategy strategy) {
        HikariDataSource pool = db.pool(4);
        String table = db.table() + (strategy == Strategy.SESSION ? "_isess" : "");
        try (JdbcLockClient locks = JdbcLocks.builder(pool).tableName(table).createTableIfMissing()
                .strategy(strategy).build()) {
            String name = TxDatabase.unique("interrupted");
            emptyIdle(pool);
            Thread.currentThread().interrupt();
            try {
                try (Lease lease = locks.lock(name).tryAcquire().orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                    assertThat(Thread.currentThread().isInterrupted()).as("flag kept").isTrue();
                    emptyIdle(pool);
                } // released on the interrupted thread, through a pool that must open a connection
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after the release").isTrue();
                emptyIdle(pool);
                Lock view = locks.lock(TxDatabase.unique("interrupted-view")).asLock();
                assertThat(view.tryLock()).isTrue();
                view.unlock();
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after tryLock").isTrue();
                emptyIdle(pool);
                Lock notInterruptible = locks.lock(TxDatabase.unique("interrupted-lock")).asLock();
                notInterruptible.lock(); // Lock.lock() is not interruptible
                notInterruptible.unlock();
                assertThat(Thread.currentThread().isInterrupted()).as("flag kept after lock()").isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(locks.lock(name).tryAcquire()).as("released").isPresent().get().satisfies(Lease::close);
        }
    }
}
