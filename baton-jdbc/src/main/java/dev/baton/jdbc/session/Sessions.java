package dev.baton.jdbc.session;

import dev.baton.LockBackendException;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The client's two dedicated sessions and what they share: the <em>main</em> session for attempts that do not
 * wait (and releases, confirmations, listings), the <em>waiting</em> session for one server-side blocking wait at
 * a time; the pool they come from, the dialect's statements, the keepalive options, the client's {@link Holds},
 * and their life: the main one opened at {@link #start}, both discarded at {@link #close}.
 */
final class Sessions {
    final DataSource dataSource;
    final SessionStatements sql;
    final SessionLockBackend.SessionOptions options;
    final String description;
    final Holds holds;
    final PoolerCheck pooler;
    final Session main;
    final Session waiting;
    volatile String clientId = "baton";
    volatile boolean closed;
    /** After {@link #start}: later opens check for a pooler with the other session, never a pool borrow. */
    volatile boolean started;

    Sessions(DataSource dataSource, SessionStatements sql, SessionLockBackend.SessionOptions options) {
        this.dataSource = dataSource;
        this.sql = sql;
        this.options = options;
        this.description = sql.description;
        this.holds = new Holds(sql);
        this.pooler = new PoolerCheck(this);
        this.main = new Session("main", this);
        this.waiting = new Session("waiting", this);
    }

    /** The session that is not {@code s}: it cancels {@code s}'s wait and checks {@code s} for a pooler. */
    Session other(Session s) {
        return s == main ? waiting : main;
    }

    /** Opens the main session now: a pooler in transaction mode is refused at build(), not later. */
    void start(String clientId) {
        this.clientId = clientId;
        main.lock.lock();
        try {
            main.open();
        } catch (SQLException e) {
            throw new LockBackendException(description, "cannot open the session connection: " + e.getMessage()
                    + " (SQL state " + e.getSQLState() + ")", e);
        } finally {
            main.lock.unlock();
        }
        started = true;
    }

    /** The server ids of the two sessions; -1 when not open. */
    List<Long> ids() {
        List<Long> ids = new ArrayList<>();
        ids.add(main.conn == null ? -1 : main.serverId);
        ids.add(waiting.conn == null ? -1 : waiting.serverId);
        return ids;
    }

    void close() {
        closed = true; // no session opens after this (an acquire racing close() must not leak one)
        for (Session s : List.of(main, waiting)) {
            s.lock.lock();
            try {
                // discarded, not returned to the pool: the server frees whatever the session still holds,
                // and its session settings (lock_timeout, keepalive) never reach application code
                s.discard();
            } finally {
                s.lock.unlock();
            }
        }
        holds.clear();
    }
}
