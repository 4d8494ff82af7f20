package dev.baton;

import java.time.Duration;

/**
 * The database itself ended a wait for a lock it enforces (a row lock of {@code SELECT … FOR UPDATE}, SQLite's
 * write lock): PostgreSQL {@code lock_timeout} or {@code NOWAIT} (SQL state 55P03), MySQL/MariaDB
 * {@code innodb_lock_wait_timeout}, {@code WAIT n} or {@code NOWAIT} (errors 1205, 3572), SQLite
 * {@code SQLITE_BUSY} after the busy timeout. The driver's exception is the cause. Nothing was run and the
 * transaction was rolled back; the connection is healthy.
 *
 * <p>Unlike a {@link LockBackendException}, retrying later is the normal reaction. The holder is not known:
 * row locks do not say who holds them.
 */
public class LockWaitTimeoutException extends LockTimeoutException {
    private static final long serialVersionUID = 1L;

    private final String backend;
    private final Duration databaseBound;

    /**
     * @param backend       a description of the backend, such as {@code jdbc-rowlock/postgresql (table …)}
     * @param waited        how long the caller actually waited
     * @param databaseBound the bound the database applied, which may be coarser than the caller's (MySQL and
     *                      MariaDB count whole seconds)
     * @param cause         the driver's exception
     */
    public LockWaitTimeoutException(String lockName, String backend, Duration waited, Duration databaseBound,
                                    String message, Throwable cause) {
        super(lockName, waited, null, -1, null, backend + ": " + message);
        this.backend = backend;
        this.databaseBound = databaseBound;
        initCause(cause);
    }

    /** A description of the backend that timed out the wait. */
    public String backend() {
        return backend;
    }

    /** The wait bound the database applied (zero for {@code NOWAIT}). */
    public Duration databaseBound() {
        return databaseBound;
    }
}
