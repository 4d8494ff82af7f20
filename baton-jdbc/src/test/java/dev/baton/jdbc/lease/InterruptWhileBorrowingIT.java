package dev.baton.jdbc.lease;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.Lease;
import dev.baton.LockInterruptedException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Regression (seen once as {@code MariaDbLeaseIT.interruptWhileWaitingEndsTheWait} failing on a loaded machine): an
 * interrupt that reached a waiting {@code acquire} while the lease backend was borrowing a connection from the pool
 * came out as a {@code LockBackendException} ("… failed: … - Interrupted during connection acquisition") instead of
 * ending the wait with {@link LockInterruptedException}. Nothing had been sent, so nothing can have been granted.
 * Made certain here: every connection of the pool is taken, so the acquire's first call waits in the pool, and the
 * interrupt comes once the pool counts it as waiting.
 */
class InterruptWhileBorrowingIT {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "PostgreSQL, 127.0.0.1, 5432, jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
            "MariaDB, 127.0.0.1, 3306, jdbc:mariadb://127.0.0.1:3306/test?user=root",
    })
    void anInterruptWhileTheAcquireWaitsForAPooledConnectionEndsTheWaitAsAnInterrupt(
            String server, String host, int port, String url) throws Exception {
        TestServers.require(server, host, port);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(3);
        config.setConnectionTimeout(TimeUnit.SECONDS.toMillis(60));
        List<Connection> taken = new ArrayList<>();
        try (HikariDataSource pool = new HikariDataSource(config);
             JdbcLockClient locks = JdbcLocks.builder(pool).createTableIfMissing().build()) {
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.getHikariPoolMXBean().getTotalConnections() == 3);
            while (pool.getHikariPoolMXBean().getIdleConnections() > 0) {
                taken.add(pool.getConnection()); // whatever the backend keeps for itself, the rest is taken here
            }
            String name = "interrupt-borrow-" + UUID.randomUUID();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicBoolean flagAfter = new AtomicBoolean();
            Thread waiter = new Thread(() -> {
                try (Lease ignored = locks.lock(name).acquire(Duration.ofSeconds(30))) {
                    thrown.set(new AssertionError("granted although every pooled connection was taken"));
                } catch (Throwable t) {
                    thrown.set(t);
                }
                flagAfter.set(Thread.currentThread().isInterrupted());
            }, "waiter");
            waiter.start();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> pool.getHikariPoolMXBean().getThreadsAwaitingConnection() == 1);
            waiter.interrupt();
            waiter.join(TimeUnit.SECONDS.toMillis(20));
            assertThat(waiter.isAlive()).as("the waiter still waits 20 s after its interrupt").isFalse();
            assertThat(thrown.get())
                    .as("what the acquire interrupted while it waited for a pooled connection threw")
                    .isInstanceOf(LockInterruptedException.class);
            assertThat(flagAfter.get()).as("the interrupt flag after the acquire returned").isTrue();
        } finally {
            for (Connection c : taken) {
                c.close();
            }
        }
    }
}
