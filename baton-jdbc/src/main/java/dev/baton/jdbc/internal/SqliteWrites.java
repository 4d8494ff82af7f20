package dev.baton.jdbc.internal;

import dev.baton.jdbc.internal.ConnectionSupport.SqlCall;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * SQLite write transactions that wait for the database's write lock a short pause at a time.
 *
 * <p>Why: SQLite takes its write lock without a queue. A connection that finds it taken calls the busy handler,
 * and the one that {@code busy_timeout} installs sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, then 100 ms
 * between tries. Under steady write traffic (a line of waiters handing one lock round every few milliseconds) a
 * connection that missed twice sleeps through many hand-overs while writers that are awake take the lock in its
 * gaps: the head of the line sat in that sleep while the lock stayed free, and a newcomer's ticket waited while
 * the lock went round up to 250 times (the fairness rung, {@code SqliteLeaseIT}).
 *
 * <p>How: {@link #inWriteTransaction} reads the connection's {@code busy_timeout} (the user's bound on waiting for
 * the lock), sets it to 0 so that SQLite reports {@code SQLITE_BUSY} at once, and tries {@code BEGIN IMMEDIATE}
 * (which takes the write lock at the start) after pauses of 50 µs doubling to 1 ms until it succeeds or that
 * bound has passed; then runs the work and commits the same way (in a rollback journal a commit waits for the
 * database's readers; a commit that still fails busy when the bound has passed is rolled back, never left open), and
 * puts {@code busy_timeout} back. The two pragmas are calls
 * into the embedded library, microseconds each. Not thread-safe per connection (no JDBC connection is).
 */
public final class SqliteWrites {
    /** The first and the longest pause between two tries of the write lock. */
    private static final long FIRST_PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** SQLite's primary result code for a lock held by another connection. */
    private static final int SQLITE_BUSY = 5;

    private SqliteWrites() {
    }

    /**
     * Runs {@code work} in a write transaction of {@code c} (a connection in auto-commit mode) and commits it;
     * rolls it back and rethrows if the work fails.
     *
     * @throws SQLException the work's failure, or {@code SQLITE_BUSY} if the write lock stayed taken for the
     *                      connection's whole {@code busy_timeout}
     */
    public static <T> T inWriteTransaction(Connection c, SqlCall<T> work) throws SQLException {
        try (Statement st = c.createStatement()) {
            long budgetMillis;
            try (ResultSet rs = st.executeQuery("PRAGMA busy_timeout")) {
                budgetMillis = rs.next() ? rs.getLong(1) : 0;
            }
            st.execute("PRAGMA busy_timeout = 0");
            try {
                begin(st, budgetMillis);
                T result;
                try {
                    result = work.call(c);
                } catch (SQLException | RuntimeException | Error e) {
                    rollback(st, e);
                    throw e;
                }
                commit(st, budgetMillis);
                return result;
            } finally {
                st.execute("PRAGMA busy_timeout = " + budgetMillis);
            }
        }
    }

    /**
     * As {@link #inWriteTransaction}, for a write whose loss in a power failure is harmless (a release: the row
     * then stays held until its lease ends, as if its holder had died; a place in line): in WAL mode its commit does
     * not wait for the WAL's fsync ({@code synchronous = NORMAL} for this transaction, put back after it; the next
     * flushed commit writes it out with its own), as PostgreSQL's {@code synchronous_commit = off}. In a rollback
     * journal, where {@code NORMAL} could corrupt the database in a power failure, it is flushed as any write.
     */
    public static <T> T inWriteTransactionNotFlushed(Connection c, SqlCall<T> work) throws SQLException {
        String journal;
        int synchronous;
        // (each statement closed before the transaction: SQLite refuses to commit while one is still open)
        try (Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
                journal = rs.next() ? rs.getString(1) : "";
            }
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA synchronous")) {
            synchronous = rs.next() ? rs.getInt(1) : 0;
        }
        if (!"wal".equalsIgnoreCase(journal) || synchronous <= SYNCHRONOUS_NORMAL) {
            return inWriteTransaction(c, work);
        }
        pragma(c, "synchronous = " + SYNCHRONOUS_NORMAL);
        try {
            return inWriteTransaction(c, work);
        } finally {
            pragma(c, "synchronous = " + synchronous);
        }
    }

    private static void pragma(Connection c, String setting) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("PRAGMA " + setting);
        }
    }

    /** {@code PRAGMA synchronous}'s value for NORMAL (FULL is 2, EXTRA 3). */
    private static final int SYNCHRONOUS_NORMAL = 1;

    /** {@code BEGIN IMMEDIATE}, tried again after a short pause while another connection writes. */
    private static void begin(Statement st, long budgetMillis) throws SQLException {
        retryWhileBusy(st, "BEGIN IMMEDIATE", budgetMillis);
    }

    /**
     * Runs {@code sql}, tried again after pauses of 50 µs doubling to 1 ms while it fails {@code SQLITE_BUSY}, until
     * {@code budgetMillis} has passed.
     */
    private static void retryWhileBusy(Statement st, String sql, long budgetMillis) throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMillis);
        long pause = FIRST_PAUSE_NANOS;
        // a pending interrupt would end every park at once: like SQLite's own busy wait, this one is not
        // interruptible (it is bounded by busy_timeout); the flag is kept for the caller
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                try {
                    st.execute(sql);
                    return;
                } catch (SQLException e) {
                    if (!isBusy(e) || System.nanoTime() - deadline >= 0) {
                        throw e;
                    }
                }
                LockSupport.parkNanos(pause);
                interrupted |= Thread.interrupted();
                pause = Math.min(LONGEST_PAUSE_NANOS, pause * 2);
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * {@code COMMIT}, tried again after a short pause while it fails busy, within {@code budgetMillis}; if it still
     * fails, the transaction is rolled back (it stays open after a failed {@code COMMIT}: its connection would keep
     * SQLite's write lock, and its next {@code BEGIN} would fail "cannot start a transaction within a transaction").
     * In a rollback journal ({@code journal_mode} DELETE, TRUNCATE, PERSIST) a commit waits for every reader of the
     * database to finish (it needs the exclusive lock; new readers are held off meanwhile); in WAL mode it does not
     * wait.
     */
    private static void commit(Statement st, long budgetMillis) throws SQLException {
        try {
            retryWhileBusy(st, "COMMIT", budgetMillis);
        } catch (SQLException e) {
            rollback(st, e);
            throw e;
        }
    }

    private static void rollback(Statement st, Throwable failure) {
        try {
            st.execute("ROLLBACK");
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /** {@code SQLITE_BUSY} (the driver reports the primary or an extended code, whose low byte is the primary). */
    static boolean isBusy(SQLException e) {
        return (e.getErrorCode() & 0xff) == SQLITE_BUSY
                || (e.getMessage() != null && e.getMessage().contains("SQLITE_BUSY"));
    }
}
