package dev.baton.jdbc.session;

import dev.baton.LockBackendException;
import dev.baton.LockException;
import dev.baton.UnsupportedBackendException;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.spi.AcquireResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One dedicated connection, and the server session behind it, that holds any number of this client's session
 * locks (multiplexed): opening it (with the pooler checks, the dialect's set-up and its server id), replacing it
 * when the server or the network ended it, checking on every statement that the server session did not move,
 * the keepalive probe, and discarding it — with every lock on it — when it fails. Its server-side blocking wait
 * is its {@link ServerWait}.
 *
 * <p>Thread safety: all use of the connection and its fields is under {@link #lock}.
 */
final class Session implements SessionContext {
    private static final Logger log = LoggerFactory.getLogger(SessionLockBackend.class);
    /** Bound on any single call on a dedicated session; blocking waits are sliced far below it. */
    private static final Duration NETWORK_TIMEOUT = Duration.ofSeconds(15);

    final String role;
    /** The pair this session belongs to, and what the two share. */
    final Sessions sessions;
    final ReentrantLock lock = new ReentrantLock();
    final ServerWait serverWait = new ServerWait(this);
    Connection conn;
    long serverId;
    int generation;
    String lastLockTimeout;
    /** {@link System#nanoTime()} of the last use through {@link #open()}. */
    long lastUsed = System.nanoTime();

    Session(String role, Sessions sessions) {
        this.role = role;
        this.sessions = sessions;
    }

    /** The client's other session. */
    Session other() {
        return sessions.other(this);
    }

    @Override
    public String lastLockTimeout() {
        return lastLockTimeout;
    }

    @Override
    public void lastLockTimeout(String timeout) {
        lastLockTimeout = timeout;
    }

    @Override
    public void beginBlocking(Duration wait) {
        serverWait.begin(wait);
    }

    @Override
    public void endBlocking(Duration wait) {
        serverWait.end(wait);
    }

    @Override
    public void checkServerId(long id) {
        if (id != serverId) {
            long before = serverId;
            broken(null);
            throw new UnsupportedBackendException(sessions.description + ": the " + role + " session moved from server session " + before
                    + " to " + id + "; a pooler in transaction mode breaks session locks. Its locks are lost.");
        }
    }

    @Override
    public boolean slicedOut(SQLException e) {
        return serverWait.slicedOut(e);
    }

    // ---- opening ---------------------------------------------------------------------------------

    Connection open() throws SQLException {
        long now = System.nanoTime();
        if (conn != null && now - lastUsed > sessions.options.keepaliveIdle().toNanos() && !holdsAnything()) {
            // idle long enough for a NAT or load balancer to have dropped it without a word: a statement
            // would hang until the network timeout, so check it first (only a session holding nothing is
            // idle that long: one holding locks is probed every renewal interval)
            if (!conn.isValid((int) Math.max(1, sessions.options.probeTimeout().toSeconds()))) {
                log.debug("{}: {} session (server id {}) did not answer after {} s idle; replacing it",
                        sessions.description, role, serverId, (now - lastUsed) / 1_000_000_000L);
                discard();
            }
        }
        lastUsed = now;
        if (conn != null) {
            return conn;
        }
        if (sessions.closed) {
            throw new SQLException("the lock client is closed", "08003");
        }
        try {
            return openOnce();
        } catch (SQLException e) {
            if (!ConnectionSupport.isGone(e)) {
                throw e;
            }
            // the pool handed out a connection that died idle (its server session was ended): one more try
            log.debug("{}: {} session: a pooled connection was dead ({}); trying another", sessions.description,
                    role, e.getMessage());
            return openOnce();
        }
    }

    private Connection openOnce() throws SQLException {
        Connection c = sessions.dataSource.getConnection();
        try {
            c.setAutoCommit(true);
            // a dedicated connection must not hang forever on a dead network path
            c.setNetworkTimeout(Runnable::run, (int) NETWORK_TIMEOUT.toMillis());
            // before anything is set or taken on the session, every time one opens
            sessions.pooler.refuseEvident(c);
            sessions.sql.configure(c, sessions.clientId, sessions.options);
            long first = serverId(sessions.sql, c);
            sessions.pooler.refuseMultiplexed(this, c, first);
            conn = c;
            serverId = first;
            generation++;
            lastLockTimeout = null;
            log.debug("{}: {} session opened (server id {})", sessions.description, role, first);
            return c;
        } catch (SQLException e) {
            ConnectionSupport.discard(sessions.dataSource, c, sessions.description + " " + role
                    + " session that failed to open");
            if (sessions.pooler.statementClash(e)) {
                throw sessions.pooler.clashRefusal(e);
            }
            throw e;
        } catch (RuntimeException e) {
            ConnectionSupport.discard(sessions.dataSource, c, sessions.description + " " + role
                    + " session that failed to open");
            throw e;
        }
    }

    /** The server session id of {@code c}. */
    static long serverId(SessionStatements sql, Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql.serverIdQuery())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // ---- running a statement ---------------------------------------------------------------------

    /** A statement of an attempt, on the session's connection. */
    interface Call {
        AcquireResult call(Connection c) throws SQLException;
    }

    /**
     * Runs an attempt on this session (held by the caller), opening it if needed. A session whose server session
     * is gone — ended by the server while idle ({@code idle_session_timeout}, {@code wait_timeout}), dropped by
     * a NAT or load balancer, killed — is replaced and the attempt made once more: nothing survives on a gone
     * session (its leases, if any, are reported lost by the next renewal), so a fresh one is as good.
     */
    AcquireResult run(String name, String what, Duration wait, Call call) {
        for (int round = 0; ; round++) {
            Connection c = null;
            try {
                c = open();
                return call.call(c);
            } catch (SQLException e) {
                if (wait != null && serverWait.slicedOut(e)) {
                    return new AcquireResult.Busy(null, -1, null);
                }
                boolean gone = c != null && fatal(c, e);
                // the lock may have been granted inside the failed statement (session locks ignore rollback), so
                // the session can no longer be accounted for: discard it, and its leases report lost
                broken(e);
                if (gone && round == 0) {
                    log.debug("{}: {} session was gone ({}); retrying the {} of '{}' on a new session",
                            sessions.description, role, e.getMessage(), what, name);
                    continue;
                }
                throw new LockBackendException(sessions.description, what + " of '" + name + "' on the " + role
                        + " session failed: " + e.getMessage() + " (SQL state " + e.getSQLState() + ")", e);
            }
        }
    }

    /**
     * The keepalive probe, of a session that holds leases. A session in use by another statement (an attempt, a
     * release, a blocking wait) is alive by that use — the statement reports its own failure — so the probe never
     * waits for it: a busy client must not look dead.
     */
    void probe() {
        if (!lock.tryLock()) {
            return;
        }
        Connection c = conn;
        try {
            if (c == null) {
                return;
            }
            try (Statement st = c.createStatement()) {
                st.setQueryTimeout((int) Math.max(1, sessions.options.probeTimeout().toSeconds()));
                try (ResultSet rs = st.executeQuery(sessions.sql.serverIdQuery())) {
                    rs.next();
                    checkServerId(rs.getLong(1));
                }
            }
        } catch (SQLException e) {
            if (fatal(c, e)) {
                broken(e);
                return;
            }
            throw new LockBackendException(sessions.description, "keepalive probe of the " + role
                    + " session failed: " + e.getMessage(), e);
        } catch (LockException e) {
            log.warn(e.getMessage());
        } finally {
            lock.unlock();
        }
    }

    // ---- failure ---------------------------------------------------------------------------------

    /** Whether the client holds, or attempts, anything on this session. */
    boolean holdsAnything() {
        return sessions.holds.anyOn(this);
    }

    /**
     * The session failed, or may hold something we cannot account for: discard the connection (evicted
     * from the pool, never returned with locks or settings on it); leases on it are lost; the next use
     * opens a new session.
     */
    void broken(SQLException cause) {
        boolean held = holdsAnything();
        // a session that held nothing (closed by the server while idle) is routine: replaced, not a warning
        if (held) {
            log.warn("{}: {} session (server id {}) is gone or unusable; its locks are lost: {}", sessions.description,
                    role, serverId, cause == null ? "session moved" : cause.getMessage());
        } else {
            log.debug("{}: {} session (server id {}) is gone or unusable: {}", sessions.description, role, serverId,
                    cause == null ? "session moved" : cause.getMessage());
        }
        discard();
        sessions.holds.dropAll(this);
    }

    void discard() {
        if (conn != null) {
            ConnectionSupport.discard(sessions.dataSource, conn, sessions.description + " " + role + " session");
            conn = null;
        }
    }

    /** Whether {@code l} was granted on this session as it is now (not on one it replaced). */
    boolean holds(Holds.Local l) {
        return conn != null && l.generation() == generation;
    }

    /** Whether an error means the session is gone for good (as opposed to a timeout or a bad statement). */
    static boolean fatal(Connection c, SQLException e) {
        if (ConnectionSupport.isGone(e)) {
            return true;
        }
        try {
            return c == null || c.isClosed();
        } catch (SQLException ignored) {
            return true;
        }
    }
}
