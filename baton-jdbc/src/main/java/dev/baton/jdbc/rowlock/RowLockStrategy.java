package dev.baton.jdbc.rowlock;

import dev.baton.LockBackendException;
import dev.baton.LockNames;
import dev.baton.LockWaitTimeoutException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.TransactionWork;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.internal.StrategyTable;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The transaction row-lock strategy behind {@link dev.baton.jdbc.JdbcLockClient#inTransaction}: not re-entrant (a
 * nested call on another connection waits for itself until its bound), fair only as far as the database queues
 * row-lock waiters, held until the transaction that does the work commits or rolls back (or its connection dies).
 *
 * <p>Algorithm, on one connection borrowed for the whole call:
 * <ol>
 * <li>Make sure {@code <table>_rowlocks} exists (once per client); borrow a connection and save the settings the
 *     strategy changes ({@link ConnectionSettings}).</li>
 * <li>Lock the name's row in a transaction, bounded by the database itself, and store a fresh fencing token in
 *     it, strictly greater than every earlier grant's of the name and never reused after a rollback: the
 *     dialect's {@link RowLockStatements#lock} — {@link PostgresRowLockStatements} ({@code lock_timeout},
 *     {@code nextval} under the lock), {@link MariaDbRowLockStatements} ({@code FOR UPDATE WAIT n},
 *     {@code NEXTVAL}), {@link MySqlRowLockStatements} and {@link SqliteRowLockStatements} (two phases on the
 *     counter row; SQLite's lock is {@code BEGIN IMMEDIATE}). A wait the database ended is a
 *     {@link LockWaitTimeoutException}.</li>
 * <li>Run the work on that connection (a guarded view: it cannot commit, roll back or close it).</li>
 * <li>Commit on success, which releases the lock with the work's writes; roll back on an exception and
 *     rethrow. Put the saved settings back and return the connection.</li>
 * </ol>
 * A connection that failed with a socket or query timeout or a connection error is evicted from the pool and
 * closed, never given back (its replies may be out of step); the lease then reports lost.
 */
public final class RowLockStrategy {
    private static final long MAX_WAIT_MILLIS = Integer.MAX_VALUE;

    private final DataSource dataSource;
    private final DialectTraits traits;
    private final StrategyTable rows;
    private final RowLockStatements statements;
    private final String table;
    private final String clientId;
    private final String description;

    public RowLockStrategy(DataSource dataSource, Dialect dialect, String leaseTable, String clientId,
                           boolean createTable) {
        this.dataSource = dataSource;
        this.traits = DialectTraits.of(dialect);
        this.rows = new StrategyTable(dataSource, dialect, leaseTable, "rowlocks", createTable);
        this.table = rows.name();
        this.statements = RowLockStatements.of(dialect, table, leaseTable);
        this.clientId = clientId;
        this.description = "jdbc-rowlock/" + dialect.id() + " (table " + table + ")";
    }

    public String description() {
        return description;
    }

    public <T> T inTransaction(String name, Duration wait, TransactionWork<T> work) {
        LockNames.validate(name);
        if (wait == null) {
            throw new IllegalArgumentException("wait must not be null (Duration.ZERO tries once)");
        }
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative, was " + wait);
        }
        if (work == null) {
            throw new IllegalArgumentException("work must not be null");
        }
        rows.ensure(description);
        String holder = clientId + "#" + Thread.currentThread().getId();
        long start = System.nanoTime();
        // whole milliseconds, rounded up; the databases take at most an int of them (about 24 days)
        long waitMillis = wait.compareTo(Duration.ofMillis(MAX_WAIT_MILLIS)) >= 0 ? MAX_WAIT_MILLIS
                : wait.toMillis() + (wait.toNanosPart() % 1_000_000 > 0 ? 1 : 0);
        Connection c;
        try {
            c = dataSource.getConnection();
        } catch (SQLException e) {
            throw backendFailure("getting a connection to lock '" + name + "' failed", e);
        }
        ConnectionSettings session;
        try {
            session = new ConnectionSettings(c, statements, traits);
        } catch (SQLException e) {
            ConnectionSupport.discard(dataSource, c, "reading its settings failed");
            throw backendFailure("preparing a connection to lock '" + name + "' failed", e);
        }
        boolean broken = false;
        try {
            long token;
            try {
                token = statements.lock(c, session, name, holder, start, waitMillis);
            } catch (SQLException e) {
                broken = ConnectionSupport.isBroken(e) || !rollback(c, e);
                if (!broken && statements.isLockWaitTimeout(e)) {
                    throw waitTimeout(name, start, waitMillis, e);
                }
                throw backendFailure("locking '" + name + "' failed", e);
            } catch (RuntimeException | Error e) {
                broken = !rollback(c, e);
                throw e;
            }
            if (token < 0) {
                broken = !rollback(c, null);
                throw waitTimeout(name, start, waitMillis, null);
            }
            TransactionLease lease = new TransactionLease(name, token, holder, description);
            ConnectionSupport.Guarded guarded = ConnectionSupport.guard(c,
                    "inTransaction('" + name + "', token " + token + ")");
            T result;
            try {
                result = work.run(guarded.connection(), lease);
            } catch (SQLException e) {
                guarded.end();
                broken = ConnectionSupport.isBroken(e) || !rollback(c, e);
                endLease(lease, broken, e);
                throw backendFailure("the work under '" + name + "' (token " + token + ") failed"
                        + (broken ? " and its connection was discarded" : " and was rolled back"), e);
            } catch (RuntimeException | Error e) {
                guarded.end();
                broken = !rollback(c, e);
                endLease(lease, broken, e);
                throw e;
            }
            guarded.end();
            try {
                statements.commit(c);
            } catch (SQLException e) {
                broken = ConnectionSupport.isBroken(e) || !rollback(c, e);
                lease.lost(e);
                throw backendFailure("commit of the work under '" + name + "' (token " + token + ") failed; "
                        + (broken ? "the connection failed, so whether it committed is unknown"
                        : "it was rolled back"), e);
            }
            lease.ended();
            return result;
        } finally {
            if (broken) {
                ConnectionSupport.discard(dataSource, c, "a statement under '" + name + "' failed with its connection");
            } else {
                try {
                    session.restore();
                    c.close();
                } catch (SQLException e) {
                    ConnectionSupport.discard(dataSource, c, "restoring its settings failed: " + e.getMessage());
                }
            }
        }
    }

    private static void endLease(TransactionLease lease, boolean broken, Throwable cause) {
        if (broken) {
            lease.lost(cause);
        } else {
            lease.ended();
        }
    }

    /** Rolls back; returns whether the connection is still fit for reuse. */
    private boolean rollback(Connection c, Throwable primary) {
        try {
            statements.rollback(c);
            return true;
        } catch (SQLException e) {
            if (primary != null) {
                primary.addSuppressed(e);
            }
            return false;
        }
    }

    private LockWaitTimeoutException waitTimeout(String name, long start, long waitMillis, SQLException cause) {
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        Duration bound = statements.bound(waitMillis);
        String how = statements.how(waitMillis, bound);
        String why = cause != null ? cause.getMessage()
                : "other grants kept committing newer tokens first (the wait ran out between the two phases)";
        return new LockWaitTimeoutException(name, description, waited, bound,
                "row lock of '" + name + "' not had within " + waitMillis + " ms (waited " + waited.toMillis()
                        + " ms; database bound: " + how + "): " + why, cause);
    }

    private LockBackendException backendFailure(String what, SQLException e) {
        return new LockBackendException(description, what + ": " + e.getMessage() + " (SQL state "
                + e.getSQLState() + ", error " + e.getErrorCode() + ")", e);
    }
}
