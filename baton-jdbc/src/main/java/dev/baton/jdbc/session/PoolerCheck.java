package dev.baton.jdbc.session;

import dev.baton.UnsupportedBackendException;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.spi.Causes;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Refuses a session connection that passes through a pooler in transaction (or statement) mode, such as PgBouncer
 * with {@code pool_mode=transaction}, which moves a connection between server sessions and so silently breaks
 * session locks. Three pieces of evidence, checked on every session that opens, before anything is set or taken
 * on it: the dialect's sign that a pooler answered the login ({@link SessionStatements#poolerEvidence}, unless the
 * builder was told the pooler is in session mode); the server id changing between two statements while another
 * connection holds a transaction open ({@link #refuseMultiplexed}); the driver's named statements clashing with
 * another client's on one server session ({@link #statementClash}). After that, every statement's server id check
 * ({@link Session#checkServerId}) catches a session that moves.
 */
final class PoolerCheck {
    private final Sessions sessions;

    PoolerCheck(Sessions sessions) {
        this.sessions = sessions;
    }

    /** Refuses {@code c} if the dialect finds evidence that a pooler answered its login. */
    void refuseEvident(Connection c) throws SQLException {
        String pooler = sessions.options.poolerInSessionMode() ? null : sessions.sql.poolerEvidence(c);
        if (pooler != null) {
            throw new UnsupportedBackendException(refusal(pooler));
        }
    }

    /**
     * Refuses a connection that a pooler in transaction (or statement) mode moves between server
     * sessions: while another connection holds a transaction open — pinning the server session this
     * connection last used, if the pooler shares them — the server id must not change. The first session
     * (at {@link Sessions#start}) borrows that other connection from the pool for a moment; later opens use the
     * other dedicated session if it is free, so the strategy never needs more than its two connections (and the
     * server id check on every statement still catches a session that moves).
     */
    void refuseMultiplexed(Session self, Connection c, long first) throws SQLException {
        if (!sessions.started) {
            Connection other = sessions.dataSource.getConnection();
            boolean clean = false;
            try {
                other.setAutoCommit(false);
                Session.serverId(sessions.sql, other);
                compareIds(first, Session.serverId(sessions.sql, c));
                other.rollback();
                other.setAutoCommit(true);
                clean = true;
            } finally {
                if (clean) {
                    other.close();
                } else {
                    // never back to the pool in an unknown transaction state (through a pooler, a failed
                    // rollback leaves the shared server connection in an aborted transaction)
                    ConnectionSupport.discard(sessions.dataSource, other, sessions.description
                            + " pooler check connection");
                }
            }
            return;
        }
        Session peer = sessions.other(self);
        if (!peer.lock.tryLock()) {
            return;
        }
        try {
            Connection other = peer.conn;
            if (other == null) {
                return;
            }
            try {
                // session locks are not transactional: a transaction on the peer leaves its locks alone
                other.setAutoCommit(false);
                try {
                    Session.serverId(sessions.sql, other);
                    compareIds(first, Session.serverId(sessions.sql, c));
                } finally {
                    other.rollback();
                    other.setAutoCommit(true);
                }
            } catch (SQLException e) {
                if (Session.fatal(other, e)) {
                    peer.broken(e);
                    return;
                }
                throw e;
            }
        } finally {
            peer.lock.unlock();
        }
    }

    private void compareIds(long first, long second) {
        if (second != first) {
            throw new UnsupportedBackendException(refusal("the connection moved from server session " + first + " to "
                    + second + " between two statements"));
        }
    }

    /**
     * PostgreSQL's duplicate or missing prepared statement (42P05, 26000) on a connection just opened: the
     * driver's named statements met another client's on one server session, which only a pooler that shares
     * server sessions between clients does.
     */
    boolean statementClash(SQLException e) {
        return sessions.sql.isStatementClash(e);
    }

    /** The refusal of a connection whose opening failed with a {@link #statementClash}. */
    UnsupportedBackendException clashRefusal(SQLException e) {
        return new UnsupportedBackendException(refusal("its server-side prepared statements clash with other"
                + " clients' on a shared server session (" + e.getMessage() + ", SQL state "
                + e.getSQLState() + ")"), e);
    }

    private String refusal(String evidence) {
        return refusal(sessions.description, evidence);
    }

    /** The refusal of a pooler in transaction mode, with the evidence found. */
    static String refusal(String description, String evidence) {
        return description + ": " + evidence + ". It passes through a pooler; a pooler in transaction or statement"
                + " mode (such as PgBouncer with pool_mode=transaction) silently breaks session locks. Use the lease"
                + " strategy through the pooler, or give the session strategy a DataSource that connects to the"
                + " database directly (for a pooler in session mode, call poolerInSessionMode() on the builder).";
    }

    /** As {@link #statementClash(SQLException)}, anywhere in a cause chain (for the builder's checks). */
    static boolean statementClashInChain(Throwable e) {
        return Causes.any(e, t -> t instanceof SQLException se
                && ("42P05".equals(se.getSQLState()) || "26000".equals(se.getSQLState())));
    }
}
