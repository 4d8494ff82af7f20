package dev.baton.jdbc.rowlock;

import dev.baton.jdbc.internal.TokenCounters;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.SqlClocks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * SQLite has no row locks: the lock is {@code BEGIN IMMEDIATE}, the whole database's write lock, bounded by
 * {@code busy_timeout} (saved and put back). No non-transactional sequence either, so a grant has the same two
 * phases as MySQL's ({@link MySqlRowLockStatements}), on the lease table's counter row. The transaction is begun
 * and ended by SQL, so the driver stays in auto-commit mode.
 */
final class SqliteRowLockStatements extends RowLockStatements {
    private static final String NOW = SqlClocks.SQLITE_NOW;

    SqliteRowLockStatements(String rowLockTable, String leaseTable) {
        super(rowLockTable, leaseTable);
    }

    @Override
    long lock(Connection c, ConnectionSettings settings, String name, String holder, long start, long waitMillis)
            throws SQLException {
        // the transaction is begun by SQL (BEGIN IMMEDIATE), so the driver must stay in auto-commit mode
        c.setAutoCommit(true);
        while (true) {
            // phase 1: under the write lock, commit a fresh counter value into the row
            settings.setBusyTimeout(remainingMillis(start, waitMillis));
            long token;
            try (Statement st = c.createStatement()) {
                st.execute("BEGIN IMMEDIATE");
                try {
                    TokenCounters.bump(st, counter, "UPDATE " + counter + " SET value = value + 1 WHERE id = 1");
                    try (ResultSet rs = st.executeQuery("SELECT value FROM " + counter + " WHERE id = 1")) {
                        rs.next();
                        token = rs.getLong(1);
                    }
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                            + " (name, token, holder, acquired_at) VALUES (?, ?, ?, " + NOW + ")"
                            + " ON CONFLICT (name) DO UPDATE SET token = excluded.token, holder = excluded.holder,"
                            + " acquired_at = excluded.acquired_at")) {
                        ps.setString(1, name);
                        ps.setLong(2, token);
                        ps.setString(3, holder);
                        ps.executeUpdate();
                    }
                    st.execute("COMMIT");
                } catch (SQLException e) {
                    st.execute("ROLLBACK");
                    throw e;
                }
            }
            // phase 2: take the write lock again; ours only if nobody committed a newer value in between
            settings.setBusyTimeout(remainingMillis(start, waitMillis));
            try (Statement st = c.createStatement()) {
                st.execute("BEGIN IMMEDIATE");
            }
            if (readToken(c, "SELECT token FROM " + table + " WHERE name = ?", name) == token) {
                settings.restoreBusyTimeout();
                return token;
            }
            try (Statement st = c.createStatement()) {
                st.execute("ROLLBACK");
            }
            if (remainingMillis(start, waitMillis) == 0) {
                return -1;
            }
        }
    }

    @Override
    void commit(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("COMMIT");
        }
    }

    @Override
    void rollback(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("ROLLBACK");
        } catch (SQLException e) {
            String m = String.valueOf(e.getMessage());
            if (!m.contains("no transaction is active")) {
                throw e;
            }
        }
    }

    /** {@code SQLITE_BUSY}: the busy timeout ran out. */
    @Override
    boolean isLockWaitTimeout(SQLException e) {
        return (e.getErrorCode() & 0xff) == ConnectionSupport.SQLITE_BUSY;
    }

    @Override
    String how(long waitMillis, java.time.Duration bound) {
        return "busy_timeout " + waitMillis + " ms (SQLite's whole-database write lock)";
    }
}
