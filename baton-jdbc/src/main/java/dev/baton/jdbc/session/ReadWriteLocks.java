package dev.baton.jdbc.session;

import dev.baton.LockBackendException;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Read-write session locks (PostgreSQL's shared and exclusive advisory locks, on a key of their own apart from the
 * name's plain lock): acquiring and releasing them. Inside the client readers share a key and a writer is alone,
 * reserved in {@link Holds} before the server is asked; on the server, {@link SessionStatements#attemptRw} and
 * {@link SessionStatements#releaseRw}.
 */
final class ReadWriteLocks {
    private final Sessions sessions;
    private final Holds holds;
    private final Names names;
    private final SessionStatements sql;

    ReadWriteLocks(Sessions sessions, Names names) {
        this.sessions = sessions;
        this.holds = sessions.holds;
        this.names = names;
        this.sql = sessions.sql;
    }

    /**
     * Reserves locally (readers share, a writer is alone), then asks the server on {@code s} (whose lock the caller
     * holds); undoes the reservation if refused. Null for a waiting caller ({@code wait} non-null) when the key is
     * busy inside this client, or when a timed-out wait could not tell its own grant from the session's other reads.
     */
    AcquireResult attempt(Session s, String name, LockMode mode, String owner, Duration wait) {
        long k = sql.rwKey(name);
        Holds.RwReservation reservation = holds.reserveRw(k, mode);
        Holds.RwState state = reservation.state();
        if (reservation.reserved() && wait != null && mode == LockMode.READ) {
            if (Holds.heldOn(state, s)) {
                // a timed-out blocking wait could not tell its own grant from the session's other reads
                holds.unreserve(k, state);
                return null;
            }
        }
        if (!reservation.reserved()) {
            if (wait != null) {
                return null; // busy inside this client: its release wakes us locally
            }
            return new AcquireResult.Busy(Holds.anyHolder(state), -1, null);
        }
        boolean kept = false;
        try {
            AcquireResult r = s.run(name, mode.name().toLowerCase() + " acquire", wait, c -> {
                names.register(c, name, Long.toString(k));
                return sql.attemptRw(s, c, k, mode, wait);
            });
            if (r instanceof AcquireResult.Granted g) {
                LeaseKey lk = new LeaseKey(name, owner, g.token(), mode);
                Holds.keep(state, lk, new Holds.Local(lk, s, s.generation));
                kept = true;
            }
            return r;
        } finally {
            if (!kept) {
                holds.unreserve(k, state);
            }
        }
    }

    /** Releases a read-write grant; whether the session still held it. */
    boolean release(LeaseKey lease) {
        long k = sql.rwKey(lease.name());
        Holds.RwState state = holds.rw(k);
        if (state == null) {
            return false;
        }
        Holds.Local l = Holds.holder(state, lease);
        if (l == null) {
            return false;
        }
        Session s = l.session();
        s.serverWait.lockForStatement();
        Connection c = s.conn;
        try {
            if (!s.holds(l)) {
                return false;
            }
            return sql.releaseRw(c, k, lease.mode());
        } catch (SQLException e) {
            boolean gone = Session.fatal(c, e);
            s.broken(e); // as in a plain release: the server frees what the discarded session held
            if (gone) {
                return false;
            }
            throw new LockBackendException(sessions.description, "release of '" + lease.name() + "' failed; the session was"
                    + " discarded, so the server frees the lock: " + e.getMessage(), e);
        } finally {
            s.lock.unlock();
            if (Holds.remove(state, lease)) {
                // broken() may have removed (and uncounted) it already; count each holder out once
                holds.unreserve(k, state);
            }
        }
    }
}
