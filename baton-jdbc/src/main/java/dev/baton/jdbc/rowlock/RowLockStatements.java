package dev.baton.jdbc.rowlock;

import dev.baton.jdbc.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How {@link RowLockStrategy} takes the row lock in one dialect: the lock step (step 1 of its algorithm, whose
 * shape differs per database), how the transaction ends, and how a wait that ran out is recognised and
 * described. Chosen once per client by {@link #of}.
 */
abstract class RowLockStatements {
    /** The row-lock table, {@code <table>_rowlocks}. */
    final String table;
    /** The lease table's sequence (PostgreSQL, MariaDB). */
    final String sequence;
    /** The lease table's counter row (MySQL, SQLite). */
    final String counter;

    RowLockStatements(String rowLockTable, String leaseTable) {
        this.table = rowLockTable;
        this.sequence = leaseTable + "_token_seq";
        this.counter = leaseTable + "_token";
    }

    /** The statement set of a dialect: the one place the row-lock strategy looks at it. */
    static RowLockStatements of(Dialect dialect, String rowLockTable, String leaseTable) {
        return switch (dialect) {
            case POSTGRESQL -> new PostgresRowLockStatements(rowLockTable, leaseTable);
            case MARIADB -> new MariaDbRowLockStatements(rowLockTable, leaseTable);
            case MYSQL -> new MySqlRowLockStatements(rowLockTable, leaseTable);
            case SQLITE -> new SqliteRowLockStatements(rowLockTable, leaseTable);
        };
    }

    /**
     * Takes the lock: returns with {@code c} in an open transaction holding it and the fresh token stored, or
     * returns -1 if the wait ran out without an SQL error (MySQL/SQLite: another grant kept getting in first).
     *
     * @param start      {@link System#nanoTime()} when the call began
     * @param waitMillis the whole wait, in milliseconds
     */
    abstract long lock(Connection c, ConnectionSettings settings, String name, String holder, long start,
                       long waitMillis) throws SQLException;

    /** Whether the strategy changes the transaction isolation (so it is saved and put back). */
    boolean changesIsolation() {
        return false;
    }

    /** Commits the lock's transaction (with the work's writes). */
    void commit(Connection c) throws SQLException {
        c.commit();
    }

    /** Rolls the lock's transaction back. */
    void rollback(Connection c) throws SQLException {
        c.rollback();
    }

    /** Whether the error is the database ending the wait for the lock. */
    abstract boolean isLockWaitTimeout(SQLException e);

    /** The bound the database applied to a wait of {@code waitMillis}. */
    Duration bound(long waitMillis) {
        return Duration.ofMillis(waitMillis);
    }

    /** How the database bounded the wait, for the timeout's message. */
    abstract String how(long waitMillis, Duration bound);

    // ---- helpers of the lock steps ----------------------------------------------------------------

    static long remainingMillis(long start, long waitMillis) {
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        return Math.max(0, waitMillis - elapsed);
    }

    static boolean selectRow(Connection c, String sql, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    static long readToken(Connection c, String sql, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }
}
