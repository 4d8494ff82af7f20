package dev.baton.jdbc.rowlock;

import com.zaxxer.hikari.HikariDataSource;
import dev.baton.LockBackendException;
import dev.baton.LockLostException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.fixtures.TxDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A connection that hit a socket or query timeout inside {@link JdbcLockClient#inTransaction} is evicted, never
 * handed out again: a real server-side stall ({@code pg_sleep}) past the driver's {@code socketTimeout} (1 s) or
 * a statement's query timeout, in a two-connection HikariCP pool (one is the client's {@code LISTEN} connection),
 * then the pool's next connection must be a different server process ({@code pg_backend_pid()}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresRowLockEvictionIT {
    private final TxDatabase db = TxDatabase.postgres();

    @AfterAll
    void close() {
        db.close();
    }

    private static int backendPid(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private void assertEvicted(HikariDataSource pool, int stalledPid) throws SQLException {
        try (Connection c = pool.getConnection()) {
            assertThat(backendPid(c)).as("server process of the pool's next connection").isNotEqualTo(stalledPid);
        }
        assertThat(pool.getHikariPoolMXBean().getTotalConnections()).isLessThanOrEqualTo(2);
    }

    @Test
    void aSocketTimeoutEvictsTheConnectionAndReportsTheLeaseLost() throws Exception {
        HikariDataSource pool = db.pool(2, "&socketTimeout=1");
        JdbcLockClient locks = db.client(pool);
        String name = TxDatabase.unique("tx-socket-timeout");
        AtomicInteger pid = new AtomicInteger();
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
            pid.set(backendPid(c));
            lease.onLost(lost::set);
            try (Statement st = c.createStatement()) {
                st.execute("SELECT pg_sleep(2.5)");
            }
            return null;
        })).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("the work under '" + name + "'")
                .hasMessageContaining("its connection was discarded");
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(lost.get()).isNotNull();
        assertThat(lost.get().lockName()).isEqualTo(name);
        assertEvicted(pool, pid.get());
        System.out.printf("socket timeout (1 s) during pg_sleep(2.5): inTransaction failed after %d ms; pid %d evicted%n",
                millis, pid.get());
    }

    @Test
    void aQueryTimeoutEvictsTheConnection() throws Exception {
        HikariDataSource pool = db.pool(2);
        JdbcLockClient locks = db.client(pool);
        String name = TxDatabase.unique("tx-query-timeout");
        AtomicInteger pid = new AtomicInteger();
        assertThatThrownBy(() -> locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> {
            pid.set(backendPid(c));
            try (Statement st = c.createStatement()) {
                st.setQueryTimeout(1);
                st.execute("SELECT pg_sleep(3)");
            }
            return null;
        })).isInstanceOf(LockBackendException.class).hasMessageContaining("its connection was discarded");
        assertEvicted(pool, pid.get());
        // the lock itself is free again at once: the server cancelled the statement and the transaction ended
        Integer again = locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> 1);
        assertThat(again).isEqualTo(1);
    }

    @Test
    void aHealthyConnectionIsReturnedToThePool() throws Exception {
        HikariDataSource pool = db.pool(2);
        JdbcLockClient locks = db.client(pool);
        String name = TxDatabase.unique("tx-reuse");
        int first = locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> backendPid(c));
        int second = locks.inTransaction(name, Duration.ofSeconds(5), (c, lease) -> backendPid(c));
        assertThat(second).isEqualTo(first);
        try (Connection c = pool.getConnection()) {
            assertThat(c.getAutoCommit()).isTrue();
            assertThat(c.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_READ_COMMITTED);
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW lock_timeout")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("0");
            }
        }
    }
}
