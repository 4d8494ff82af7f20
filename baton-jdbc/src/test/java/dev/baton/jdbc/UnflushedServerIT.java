package dev.baton.jdbc;

import dev.baton.Lease;
import dev.baton.UnsupportedBackendException;
import dev.baton.testkit.OwnServer;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Servers of their own, set up as many production servers are: commits acknowledged before they are flushed. A
 * grant or renewal acknowledged to a client survives a crash right after it, or the client is refused at build().
 */
class UnflushedServerIT {

    private static PGSimpleDataSource pg(OwnServer server) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(server.url());
        return ds;
    }

    /** The lock's row as the restarted server has it: owner, token, expires_at; null if there is none. */
    private static Object[] row(OwnServer server, String name) throws Exception {
        try (Connection c = DriverManager.getConnection(server.url());
             PreparedStatement ps = c.prepareStatement("SELECT owner, token, expires_at FROM baton_locks WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Object[] {rs.getString(1), rs.getLong(2), rs.getObject(3, OffsetDateTime.class)}
                        : null;
            }
        }
    }

    /** The tables, made durable by a checkpoint: what a crash may lose is then only what the test does after. */
    private static void tablesCheckpointed(OwnServer server) throws Exception {
        JdbcLocks.builder(pg(server)).createTableIfMissing().build().close();
        checkpoint(server);
    }

    private static void checkpoint(OwnServer server) throws Exception {
        try (Connection c = DriverManager.getConnection(server.url()); Statement st = c.createStatement()) {
            st.execute("CHECKPOINT");
        }
    }

    @Test
    void aPostgresGrantAcknowledgedUnderSynchronousCommitOffSurvivesAnImmediateStopRightAfterIt() throws Exception {
        try (OwnServer server = OwnServer.start(OwnServer.Engine.POSTGRESQL, "-c", "synchronous_commit=off",
                "-c", "wal_writer_delay=10000ms")) {
            tablesCheckpointed(server);
            JdbcLockClient client = JdbcLocks.builder(pg(server)).leaseTime(Duration.ofSeconds(60)).build();
            Lease lease = client.lock("crash-after-grant").tryAcquire().orElseThrow();
            server.crash();
            server.start();
            Object[] row = row(server, "crash-after-grant");
            assertThat(row).as("the row of the grant (token %d) after the crash", lease.fencingToken()).isNotNull();
            assertThat(row[1]).as("its token").isEqualTo(lease.fencingToken());
            assertThat((String) row[0]).as("its owner").isNotNull();
            closeQuietly(client);
        }
    }

    @Test
    void aMariaDbServerThatFlushesItsLogOnceASecondIsRefusedAtBuildUnlessOptedIn() throws Exception {
        try (OwnServer server = OwnServer.start(OwnServer.Engine.MARIADB, "--innodb-flush-log-at-trx-commit=0")) {
            MariaDbDataSource ds = new MariaDbDataSource(server.url());
            for (Strategy strategy : Strategy.values()) {
                assertThatThrownBy(() -> JdbcLocks.builder(ds).strategy(strategy).createTableIfMissing().build())
                        .as("the %s strategy", strategy)
                        .isInstanceOf(UnsupportedBackendException.class)
                        .hasMessageContaining("innodb_flush_log_at_trx_commit is 0")
                        .hasMessageContaining("allowUnflushedCommits()");
            }
            JdbcLocks.builder(ds).createTableIfMissing().allowUnflushedCommits().build().close();
        }
    }

    private static void closeQuietly(JdbcLockClient client) {
        try {
            client.close();
        } catch (RuntimeException e) {
            // its leases may be reported lost: the server restarted under it
        }
    }
}
