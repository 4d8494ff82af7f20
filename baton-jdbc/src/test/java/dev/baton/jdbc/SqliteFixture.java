package dev.baton.jdbc;

import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * SQLite in a file under {@code target/} (shared with holder processes, which run in the same working
 * directory). WAL mode, busy timeout 10 s. "Unreachable" is a write lock held by another connection.
 */
public final class SqliteFixture extends JdbcFixture {
    static final Path FILE = Path.of("target", "sqlite-contract", "contract.db").toAbsolutePath();

    public SqliteFixture() {
        try {
            Files.createDirectories(FILE.getParent());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static DataSource dataSource(Path file) {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setBusyTimeout(10_000);
        SQLiteDataSource ds = new SQLiteDataSource(config);
        ds.setUrl("jdbc:sqlite:" + file);
        return ds;
    }

    @Override
    public String name() {
        return "sqlite";
    }

    @Override
    String table() {
        return "baton_contract";
    }

    @Override
    DataSource rawDataSource(int proxyPort) {
        return dataSource(FILE);
    }

    @Override
    String[] hostAndPort() {
        return null;
    }

    @Override
    String sessionIdQuery() {
        return null;
    }

    @Override
    Connection admin() throws SQLException {
        return dataSource(FILE).getConnection();
    }

    @Override
    void killSession(Connection admin, long sessionId) {
        throw new UnsupportedOperationException("embedded");
    }

    @Override
    public AutoCloseable cutOff(dev.baton.LockClient client) {
        try {
            Connection blocker = admin();
            try (Statement st = blocker.createStatement()) {
                st.execute("BEGIN EXCLUSIVE");
            }
            return () -> {
                try (Statement st = blocker.createStatement()) {
                    st.execute("ROLLBACK");
                } finally {
                    blocker.close();
                }
            };
        } catch (SQLException e) {
            throw new IllegalStateException("could not take SQLite's write lock", e);
        }
    }

    @Override
    String expireSql() {
        return "UPDATE " + table() + " SET expires_at = CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) - 1"
                + " WHERE name = ?";
    }
}
