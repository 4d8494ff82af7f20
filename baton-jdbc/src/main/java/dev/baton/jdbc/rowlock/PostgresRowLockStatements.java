package dev.baton.jdbc.rowlock;

import dev.baton.jdbc.internal.PgDurableCommit;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * PostgreSQL: begin (READ COMMITTED), {@code set_config('lock_timeout', remaining, true)}, {@code SELECT … FOR
 * UPDATE} the name's row ({@code NOWAIT} for a zero wait); if there is none, {@code INSERT … ON CONFLICT DO
 * NOTHING} it in the same transaction and lock it; then draw the token with {@code nextval} of the lease table's
 * sequence <em>after</em> the lock is held, store it with the holder and put {@code lock_timeout} back, so the
 * work's own statements are not bounded by the lock's wait. The same statement makes the transaction's commit
 * flushed ({@link PgDurableCommit}), whatever the server's {@code synchronous_commit}: a commit lost in a crash would
 * let the sequence hand out the same token again (the row lock itself ends with the crash).
 */
final class PostgresRowLockStatements extends RowLockStatements {

    PostgresRowLockStatements(String rowLockTable, String leaseTable) {
        super(rowLockTable, leaseTable);
    }

    @Override
    boolean changesIsolation() {
        return true;
    }

    @Override
    long lock(Connection c, ConnectionSettings settings, String name, String holder, long start, long waitMillis)
            throws SQLException {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        boolean nowait = waitMillis == 0;
        // the insert of a missing row may wait for another transaction's insert: bounded too, even for NOWAIT
        String previous = setLockTimeout(c, start, waitMillis);
        String select = "SELECT token FROM " + table + " WHERE name = ? FOR UPDATE" + (nowait ? " NOWAIT" : "");
        if (!selectRow(c, select, name)) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (name) VALUES (?)"
                    + " ON CONFLICT (name) DO NOTHING")) {
                ps.setString(1, name);
                ps.executeUpdate();
            }
            setLockTimeout(c, start, waitMillis);
            if (!selectRow(c, select, name)) {
                throw new SQLException("the lock row of '" + name + "' in " + table + " was deleted while locking it");
            }
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET token = nextval('" + sequence + "'),"
                + " holder = ?, acquired_at = now() WHERE name = ? RETURNING token, set_config('lock_timeout', ?, true),"
                + " " + PgDurableCommit.CALL)) {
            ps.setString(1, holder);
            ps.setString(2, name);
            ps.setString(3, previous);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Sets a transaction-local {@code lock_timeout} of the remaining wait; returns the previous value. */
    private static String setLockTimeout(Connection c, long start, long waitMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', ?, true)")) {
            // 0 would mean "no limit" to PostgreSQL: wait at least 1 ms
            ps.setString(1, Math.max(1, remainingMillis(start, waitMillis)) + "ms");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    /** lock_not_available: {@code lock_timeout} or {@code NOWAIT}. */
    @Override
    boolean isLockWaitTimeout(SQLException e) {
        return "55P03".equals(e.getSQLState());
    }

    @Override
    String how(long waitMillis, Duration bound) {
        return waitMillis == 0 ? "NOWAIT" : "lock_timeout " + waitMillis + " ms";
    }
}
