package dev.baton.jdbc.lease;

import dev.baton.LockBackendException;
import dev.baton.NothingGrantedException;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.ConnectionSupport.SqlCall;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.spi.Causes;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * How one lease backend talks to its database: each call borrows a connection from the pool for one call, in
 * auto-commit mode whatever the pool's default, and gives it back; an idempotent call that failed on a dead
 * connection or a serialization failure is made again at once. A driver error becomes a
 * {@link LockBackendException} naming the backend and operation; a borrow the pool gave up because the thread was
 * interrupted becomes a {@link NothingGrantedException} (nothing was sent).
 */
final class AutoCommittedCalls {
    /** Attempts of an idempotent call that failed with a serialization failure (40001), the first included. */
    private static final int SERIALIZATION_ATTEMPTS = 4;

    private final DataSource dataSource;
    private final DialectTraits traits;
    /** The backend's description, which every {@link LockBackendException} names. */
    private final String description;

    AutoCommittedCalls(DataSource dataSource, DialectTraits traits, String description) {
        this.dataSource = dataSource;
        this.traits = traits;
        this.description = description;
    }

    /**
     * Borrows a connection for one call in auto-commit mode, whatever the pool's default, by
     * {@link ConnectionSupport#autoCommitted}. (Isolation is not asked for: on PostgreSQL that costs a round
     * trip per call; the statements that care handle it themselves.)
     */
    <T> T run(String what, SqlCall<T> call) {
        return run(what, call, false);
    }

    /**
     * As {@link #run(String, SqlCall)}, for an idempotent call ({@code idempotent}: renewal, release,
     * confirmation), which is made again at once, on a connection from the pool, if it failed because
     * <ul>
     *   <li>the pool handed out a connection whose server session had died (the pool evicts the dead one),
     *       instead of waiting a whole renewal interval; or</li>
     *   <li>its statement, run at a pool's REPEATABLE READ (or SERIALIZABLE) default, found its row changed by a
     *       transaction that committed after the statement began (PostgreSQL 40001: a renewal or a takeover
     *       racing a release): at READ COMMITTED the server would have re-read the row; a new statement sees
     *       the change and does what that would have done. Each such failure needs another commit to the same
     *       rows in the meantime, so a few attempts are plenty.</li>
     * </ul>
     */
    <T> T run(String what, SqlCall<T> call, boolean idempotent) {
        for (int attempt = 1; ; attempt++) {
            try {
                return attempt(attempt == 1 ? what : what + " (attempt " + attempt + ")", call);
            } catch (LockBackendException e) {
                if (!idempotent || e instanceof NothingGrantedException || !(e.getCause() instanceof SQLException se)) {
                    throw e;
                }
                boolean serialization = "40001".equals(se.getSQLState()) && attempt < SERIALIZATION_ATTEMPTS;
                if (!serialization && !(attempt == 1 && ConnectionSupport.isGone(se))) {
                    throw e;
                }
            }
        }
    }

    private <T> T attempt(String what, SqlCall<T> call) {
        Connection c;
        try {
            c = dataSource.getConnection();
        } catch (SQLException e) {
            if (interruptedWhileBorrowing(e)) {
                // nothing was sent: the core ends a waiting acquire with LockInterruptedException (the flag is set)
                throw new NothingGrantedException(description, what + " was not sent: the thread was interrupted"
                        + " while waiting for a connection from the pool (" + e.getMessage() + ")", e);
            }
            throw failed(what, e);
        }
        try (c) {
            return ConnectionSupport.autoCommitted(c, traits, call);
        } catch (SQLException e) {
            throw failed(what, e);
        }
    }

    private LockBackendException failed(String what, SQLException e) {
        return new LockBackendException(description, what + " failed: " + e.getMessage()
                + " (SQL state " + e.getSQLState() + ")", e);
    }

    /**
     * Whether a failed borrow was the pool giving up on an interrupt: an {@link InterruptedException} among its
     * causes (HikariCP: "Interrupted during connection acquisition", the thread's flag set again). Any other failed
     * borrow stays a {@link LockBackendException}, whatever the flag.
     */
    private static boolean interruptedWhileBorrowing(SQLException e) {
        return Causes.find(e, InterruptedException.class).isPresent();
    }
}
