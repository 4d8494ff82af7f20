package dev.baton.jdbc.session;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server-side blocking wait of one dedicated session ({@code pg_advisory_lock} under {@code lock_timeout},
 * {@code GET_LOCK} with a timeout): whether one is in flight, whether this client cancelled it, and the threads
 * that need the session for a short statement meanwhile. A release (or a confirmation) that needs the session
 * cancels the wait from the other session ({@code pg_cancel_backend}, {@code KILL QUERY}) rather than waiting out
 * its slice, and no new wait starts until it ran; a wait that ended without the lock — its timeout, a deadlock
 * check, or our own cancel — is told apart from a failure of the session.
 *
 * <p>Thread safety: {@link #blocking} and {@link #cancelled} are guarded by this object's monitor.
 */
final class ServerWait {
    private static final Logger log = LoggerFactory.getLogger(SessionLockBackend.class);

    private final Session session;
    /** A server-side blocking wait is in flight; guarded by this monitor, with {@link #cancelled}. */
    private boolean blocking;
    /** The wait in flight was cancelled by a release or a confirmation that needs this session now. */
    private boolean cancelled;
    /** Threads that need this session for a release and cancelled its wait: no new wait starts meanwhile. */
    private final AtomicInteger needed = new AtomicInteger();

    ServerWait(Session session) {
        this.session = session;
    }

    /** Whether a thread needs the session for a short statement now: a new wait must not start. */
    boolean needed() {
        return needed.get() > 0;
    }

    /** Marks a server-side blocking wait in flight on the session, so a release can cancel it. */
    void begin(Duration wait) {
        if (wait != null) {
            synchronized (this) {
                blocking = true;
                cancelled = false;
            }
        }
    }

    /** Ends the mark; waits, through the monitor, for a cancel being sent to finish first. */
    void end(Duration wait) {
        if (wait != null) {
            synchronized (this) {
                blocking = false;
            }
        }
    }

    /** A blocking wait that ended without the lock: its timeout, a deadlock check, or our own cancel. */
    boolean slicedOut(SQLException e) {
        return isLockWaitTimeout(e) || (cancelledByUs() && isCancel(e));
    }

    private synchronized boolean cancelledByUs() {
        return cancelled;
    }

    /** PostgreSQL query_canceled; MySQL/MariaDB "query execution was interrupted" (KILL QUERY). */
    private static boolean isCancel(SQLException e) {
        return "57014".equals(e.getSQLState()) || "70100".equals(e.getSQLState()) || e.getErrorCode() == 1317;
    }

    private static boolean isLockWaitTimeout(SQLException e) {
        // PostgreSQL: lock_not_available (lock_timeout), deadlock_detected; MySQL: ER_USER_LOCK_DEADLOCK
        return "55P03".equals(e.getSQLState()) || "40P01".equals(e.getSQLState()) || e.getErrorCode() == 3058;
    }

    /**
     * Cancels the blocking wait in flight on the session, if any, from the other session (PostgreSQL
     * {@code pg_cancel_backend}, MySQL/MariaDB {@code KILL QUERY}): one round trip on a connection the client
     * already has, no pool borrow. Under this monitor, so the wait's statement cannot end and another
     * statement start on the session before the cancel was delivered: a cancel reaches only the wait.
     */
    private void cancel() {
        Session via = session.other();
        synchronized (this) {
            if (!blocking || cancelled) {
                return;
            }
            cancelled = true;
            long target = session.serverId;
            via.lock.lock();
            Connection c = null;
            try {
                c = via.open();
                // target is a server session id (a long the server gave us), not user input
                try (Statement st = c.createStatement()) {
                    st.execute(session.sessions.sql.cancelWait(target));
                }
            } catch (SQLException e) {
                log.debug("{}: cancelling the {} session's wait failed: {}", session.sessions.description,
                        session.role, e.getMessage());
                if (c != null && Session.fatal(c, e)) {
                    via.broken(e);
                }
            } finally {
                via.lock.unlock();
            }
        }
    }

    /**
     * Takes the session for a short statement (a release, a confirmation). A server-side wait in flight on it
     * (another thread's slice, up to half a second) is cancelled rather than waited for, and no new wait
     * starts until the caller has had its turn.
     */
    void lockForStatement() {
        if (session.lock.tryLock()) {
            return;
        }
        needed.incrementAndGet();
        try {
            boolean interrupted = false;
            while (true) {
                cancel();
                try {
                    if (session.lock.tryLock(50, TimeUnit.MILLISECONDS)) {
                        break;
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // a release must not be skipped; restore the flag after
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        } finally {
            needed.decrementAndGet();
        }
    }
}
