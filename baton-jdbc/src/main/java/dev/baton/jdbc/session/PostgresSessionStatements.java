package dev.baton.jdbc.session;

import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.PgDurableCommit;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * PostgreSQL's session locks: advisory locks ({@code pg_advisory_lock}, {@code pg_try_advisory_lock}, their
 * {@code _shared} forms for read-write locks) on 64-bit keys, waits under {@code lock_timeout}, tokens from the
 * lease table's sequence, a waiting session cancelled by {@code pg_cancel_backend}, grants read from
 * {@code pg_locks}. The locks live in the server's memory and end with its sessions, so a crash frees them and
 * their holders see their sessions end: exclusion does not depend on durability. Their tokens do: the statement
 * that draws one makes its commit flushed ({@link PgDurableCommit}; the sequence writes WAL once per 32 draws, and
 * only those commits wait for a flush), so a crash never hands out a token again. Each dedicated session gets the client's TCP keepalive and {@code application_name}.
 */
final class PostgresSessionStatements extends SessionStatements {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresSessionStatements.class);

    PostgresSessionStatements(String table) {
        super(Dialect.POSTGRESQL, table);
    }

    @Override
    String serverKey(String name) {
        return Long.toString(keys.pgKey(name));
    }

    @Override
    boolean readWrite() {
        return true;
    }

    @Override
    long rwKey(String name) {
        return keys.pgRwKey(name);
    }

    @Override
    String serverIdQuery() {
        return "SELECT pg_backend_pid()";
    }

    /**
     * The process id the login's BackendKeyData gave the driver is the server session's own ({@code pg_backend_pid()})
     * on a direct connection and through a plain TCP proxy; a pooler (PgBouncer, in any mode) answers the login
     * itself with a key of its own. Deterministic, unlike watching whether the session moves between two statements,
     * which a busy transaction-mode pooler can hand back the same server session for by chance.
     */
    @Override
    String poolerEvidence(Connection c) throws SQLException {
        int login = c.unwrap(org.postgresql.PGConnection.class).getBackendPID();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            int server = rs.getInt(1);
            return server == login ? null : "the login reported process id " + login + " but the server session is "
                    + server + ": a pooler answered the login";
        }
    }

    @Override
    void configure(Connection c, String clientId, SessionLockBackend.SessionOptions options) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SET tcp_keepalives_idle = " + options.keepaliveIdle().toSeconds());
            st.execute("SET tcp_keepalives_interval = " + options.keepaliveInterval().toSeconds());
            st.execute("SET tcp_keepalives_count = " + options.keepaliveCount());
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('application_name', ?, false)")) {
            String app = "baton " + clientId;
            ps.setString(1, app.length() > 63 ? app.substring(0, 63) : app);
            ps.execute();
        }
    }

    /** A duplicate or missing prepared statement (42P05, 26000). */
    @Override
    boolean isStatementClash(SQLException e) {
        return SessionLockBackend.poolerStatementClash(e);
    }

    @Override
    void insertName(Connection c, String key, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + "_names (lock_key, name) VALUES (?, ?)"
                + " ON CONFLICT DO NOTHING")) {
            ps.setLong(1, Long.parseLong(key));
            ps.setString(2, name);
            ps.executeUpdate();
        }
    }

    @Override
    AcquireResult attempt(SessionContext s, Connection c, String key, LockMode mode, Duration wait)
            throws SQLException {
        return attempt(s, c, Long.parseLong(key), mode, wait);
    }

    @Override
    AcquireResult attemptRw(SessionContext s, Connection c, long k, LockMode mode, Duration wait)
            throws SQLException {
        return attempt(s, c, k, mode, wait);
    }

    /**
     * One statement takes the advisory lock (waiting under {@code lock_timeout} if {@code wait}) and, only if
     * granted, draws the token from the lease table's sequence; it returns the server session's pid, and the
     * holder ({@code application_name} and pid) when refused.
     */
    private AcquireResult attempt(SessionContext s, Connection c, long k, LockMode mode, Duration wait)
            throws SQLException {
        if (wait != null) {
            String timeout = Math.max(1, wait.toMillis()) + "ms";
            if (!timeout.equals(s.lastLockTimeout())) {
                try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, false)")) {
                    ps.setString(1, timeout);
                    ps.execute();
                }
                s.lastLockTimeout(timeout);
            }
        }
        boolean shared = mode == LockMode.READ;
        String take;
        if (wait != null) {
            take = (shared ? "pg_advisory_lock_shared(?)" : "pg_advisory_lock(?)") + " IS NOT NULL"; // void is not null
        } else if (shared) {
            // a writer queued on the server holds back new readers, even those of a session that already
            // reads (PostgreSQL grants a session's repeated request without looking at the queue)
            take = "CASE WHEN EXISTS (SELECT 1 FROM pg_locks w WHERE w.locktype = 'advisory' AND NOT w.granted"
                    + " AND w.mode = 'ExclusiveLock' AND w.objsubid = 1 AND w.classid::bigint = ?"
                    + " AND w.objid::bigint = ?) THEN false ELSE pg_try_advisory_lock_shared(?) END";
        } else {
            take = "pg_try_advisory_lock(?)";
        }
        String sql = "SELECT g.ok, CASE WHEN g.ok THEN nextval('" + table + "_token_seq') END, pg_backend_pid(),"
                + " CASE WHEN g.ok THEN NULL ELSE (SELECT coalesce(a.application_name, '') || ' (pid ' || l.pid || ')'"
                + "  FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
                + "  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                + "  AND l.classid::bigint = ? AND l.objid::bigint = ? LIMIT 1) END"
                + " FROM (SELECT " + take + " AS ok OFFSET 0) g, " + PgDurableCommit.FROM_ITEM;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setLong(1, k >>> 32);
            ps.setLong(2, k & 0xFFFFFFFFL);
            int i = 3;
            if (shared && wait == null) {
                ps.setLong(i++, k >>> 32);
                ps.setLong(i++, k & 0xFFFFFFFFL);
            }
            ps.setLong(i, k);
            s.beginBlocking(wait);
            try (ResultSet rs = ps.executeQuery()) {
                s.endBlocking(wait);
                rs.next();
                s.checkServerId(rs.getLong(3));
                if (rs.getBoolean(1)) {
                    return new AcquireResult.Granted(rs.getLong(2));
                }
                return new AcquireResult.Busy(rs.getString(4), -1, null);
            } finally {
                s.endBlocking(wait);
            }
        } catch (SQLException e) {
            if (wait == null || !s.slicedOut(e)) {
                throw e;
            }
            // PostgreSQL may grant the lock in the instant its lock_timeout (or deadlock check) fires, raise
            // the error anyway, and keep the grant: session-level advisory locks survive the error. Found by
            // `baton check --strategy session`: the session then held a lock nobody knew of. Nothing else in
            // this client holds this key on this session (the local reservation, and no blocking read on a
            // session that already reads it), so a grant on the session now is this attempt's.
            try {
                if (heldBySession(c, k, shared)) {
                    try (Statement st = c.createStatement();
                         ResultSet rs = st.executeQuery("SELECT nextval('" + table + "_token_seq'), "
                                 + PgDurableCommit.CALL)) {
                        rs.next();
                        LOG.debug("{}: lock granted as its wait timed out; kept as a grant", description);
                        return new AcquireResult.Granted(rs.getLong(1));
                    }
                }
            } catch (SQLException unknown) {
                // not a timeout any more: the caller must discard the session, which may hold the lock
                throw new SQLException("could not tell whether a timed-out wait left the lock granted: "
                        + unknown.getMessage(), "58000", unknown);
            }
            throw e;
        }
    }

    private static boolean heldBySession(Connection c, long k, boolean shared) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE"
                + " locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1"
                + " AND classid::bigint = ? AND objid::bigint = ? AND mode = ?)")) {
            ps.setLong(1, k >>> 32);
            ps.setLong(2, k & 0xFFFFFFFFL);
            ps.setString(3, shared ? "ShareLock" : "ExclusiveLock");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    @Override
    boolean release(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)::int")) {
            ps.setLong(1, Long.parseLong(key));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    @Override
    boolean releaseRw(Connection c, long k, LockMode mode) throws SQLException {
        String fn = mode == LockMode.READ ? "pg_advisory_unlock_shared" : "pg_advisory_unlock";
        try (PreparedStatement ps = c.prepareStatement("SELECT " + fn + "(?)::int")) {
            ps.setLong(1, k);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    @Override
    String cancelWait(long target) {
        // target is a server session id (a long the server gave us), not user input
        return "SELECT pg_cancel_backend(" + target + ")";
    }

    /** {@code pg_locks} has the key, in the grant's mode, granted to that session's backend pid. */
    @Override
    Answer confirm(Connection c, LeaseKey lease, long holderId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid(), EXISTS (SELECT 1 FROM pg_locks"
                + " WHERE locktype = 'advisory' AND pid = ? AND granted AND objsubid = 1 AND classid::bigint = ?"
                + " AND objid::bigint = ? AND mode = ? AND database = (SELECT oid FROM pg_database"
                + " WHERE datname = current_database()))")) {
            long k = lease.mode() == LockMode.EXCLUSIVE ? keys.pgKey(lease.name()) : keys.pgRwKey(lease.name());
            ps.setLong(1, holderId);
            ps.setLong(2, k >>> 32);
            ps.setLong(3, k & 0xFFFFFFFFL);
            ps.setString(4, lease.mode() == LockMode.READ ? "ShareLock" : "ExclusiveLock");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Answer(rs.getLong(1), rs.getBoolean(2));
            }
        }
    }

    @Override
    List<LockInfo> inspect(Connection c) throws SQLException {
        List<LockInfo> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT n.name, coalesce(a.application_name, '') || ' (pid '"
                + " || l.pid || ')' FROM pg_locks l"
                + " JOIN " + table + "_names n ON n.lock_key = ((l.classid::bigint << 32) | l.objid::bigint)"
                + " LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
                + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                + " ORDER BY n.name"); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new LockInfo(rs.getString(1), rs.getString(2), -1, null, null, true));
            }
        }
        return out;
    }
}
