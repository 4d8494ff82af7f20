package dev.baton.jdbc.session;

import dev.baton.jdbc.internal.SessionKeys;
import dev.baton.LockBackendException;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.UnsupportedBackendException;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.lease.LeaseTable;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.ReadWriteModes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The session strategy: PostgreSQL advisory locks or MySQL/MariaDB named locks ({@code GET_LOCK}), held
 * by server sessions that the server frees the moment they end.
 *
 * <p>Multiplexed: a client holds all its session locks on two dedicated connections, whatever their number
 * — the <em>main</em> session for attempts that do not wait, and the <em>waiting</em> session for one
 * server-side blocking wait at a time ({@code pg_advisory_lock} under {@code lock_timeout}, {@code GET_LOCK}
 * with a timeout); a lock granted there stays there. Other threads of the client that wait at the same
 * time poll with backoff and are woken at once by releases inside the client. The two connections are all
 * the strategy takes from the pool: nothing is borrowed while a session is held (names are recorded, and
 * locks listed, on the session's own connection).
 *
 * <p>Algorithm:
 * <ol>
 *   <li>Threads of one client share its sessions, and a session may re-take a lock it holds, so the
 *       client first reserves the lock key locally; a key reserved by another thread is busy.</li>
 *   <li>One statement takes the lock and, only if granted, draws the fencing token from the lease
 *       table's sequence (MySQL: bumps the counter row next) and returns the session's server id.</li>
 *   <li>Every statement checks the server id of its session: a change means the connection passes
 *       through a pooler that moves it between server sessions, which silently breaks session locks.</li>
 *   <li>Renewal is a keepalive probe of each session. A session that died (terminated, killed, network
 *       reset) loses every lease on it, at once; a probe that cannot tell (timeout) leaves the leases to
 *       their conservative deadline; a session busy with another statement is alive by that use.</li>
 *   <li>An attempt that finds its session gone (closed by the server while idle, dropped by the network)
 *       replaces the session and tries once more: nothing survives on a gone session.</li>
 *   <li>A release (or a statement that must run on the waiting session) while another thread's blocking
 *       wait is in flight there cancels that wait from the main session ({@code pg_cancel_backend},
 *       {@code KILL QUERY}) rather than waiting out its slice; no new wait starts until it ran. A wait
 *       granted in the instant it was cancelled is kept as a grant (checked on the session).</li>
 *   <li>{@link #confirm} asks the server, on the main session, whether the holding session still holds
 *       the key: {@link dev.baton.Lease#checkValid()} is exact.</li>
 * </ol>
 *
 * <p>Keys: PostgreSQL's 64-bit key is the first 8 bytes of SHA-256 over {@code table + U+0000 + name}
 * (big-endian, signed); MySQL's lock name is {@code "baton:"} plus the unpadded base64url SHA-256 of the
 * same bytes (49 characters, within MySQL's 64). Two names whose PostgreSQL keys collide (about 1 in
 * 10<sup>7</sup> among a million names) exclude each other: a false contention, never a false sharing.
 * Names are recorded once per client in {@code <table>_names} so {@code baton list} shows them whole.
 * ({@link SessionKeys} computes them.)
 *
 * <p>Each dialect's statements, and what else it does differently (session set-up, cancelling a wait,
 * read-write locks), are in its {@link SessionStatements}: {@link PostgresSessionStatements},
 * {@link MySqlSessionStatements}; this class holds the algorithm only.
 */
public class SessionLockBackend implements BlockingWait, ConfirmsGrants {
    private static final Logger log = LoggerFactory.getLogger(SessionLockBackend.class);

    private final DataSource dataSource;
    private final SessionStatements sql;
    private final String table;
    private final String description;
    private final SessionOptions options;
    /** Bound on any single call on a dedicated session; blocking waits are sliced far below it. */
    private static final Duration NETWORK_TIMEOUT = Duration.ofSeconds(15);
    private final Session main = new Session("main");
    private final Session waiting = new Session("waiting");
    /** Server key → the local holder (token -1 while an attempt is in flight). */
    private final ConcurrentHashMap<String, Local> local = new ConcurrentHashMap<>();
    private final Set<String> registeredNames = ConcurrentHashMap.newKeySet();
    /** Read-write locks (PostgreSQL): advisory key → the client's holds and reservations on it. */
    private final ConcurrentHashMap<Long, RwState> rwLocal = new ConcurrentHashMap<>();

    /** Guarded by its own monitor. {@code count} is holders plus attempts in flight, all of {@code mode}. */
    private static final class RwState {
        LockMode mode;
        int count;
        final java.util.Map<LeaseKey, Local> holders = new java.util.HashMap<>();

        RwState(LockMode mode) {
            this.mode = mode;
        }
    }
    private volatile String clientId = "baton";
    private volatile boolean closed;
    /** After {@link #start}: later opens check for a pooler with the other session, never a pool borrow. */
    private volatile boolean started;

    private record Local(LeaseKey key, Session session, int generation) {
    }

    /** Keepalive settings of the session connections. */
    public record SessionOptions(Duration keepaliveIdle, Duration keepaliveInterval, int keepaliveCount,
                          Duration probeTimeout, boolean poolerInSessionMode) {
    }

    /**
     * The session backend speaking {@code statements}: where they have read-write locks (PostgreSQL's shared and
     * exclusive advisory locks) one with {@link ReadWriteModes}, elsewhere ({@code GET_LOCK} has no shared mode)
     * one without.
     */
    public static SessionLockBackend create(DataSource dataSource, SessionStatements statements, SessionOptions options) {
        return statements.readWrite() ? new WithReadWrite(dataSource, statements, options)
                : new SessionLockBackend(dataSource, statements, options);
    }

    /** The session backend with read-write locks (PostgreSQL: shared/exclusive advisory locks). */
    static final class WithReadWrite extends SessionLockBackend implements ReadWriteModes {
        private WithReadWrite(DataSource dataSource, SessionStatements statements, SessionOptions options) {
            super(dataSource, statements, options);
        }
    }

    private SessionLockBackend(DataSource dataSource, SessionStatements statements, SessionOptions options) {
        this.dataSource = dataSource;
        this.sql = statements;
        this.table = statements.table;
        this.options = options;
        this.description = statements.description;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void start(String clientId) {
        this.clientId = clientId;
        // open the main session now: a pooler in transaction mode is refused at build(), not later
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

    // ---- sessions --------------------------------------------------------------------------------

    /** One dedicated connection; all use is under {@link #lock}. */
    private final class Session implements SessionContext {
        final String role;
        final ReentrantLock lock = new ReentrantLock();
        Connection conn;
        long serverId;
        int generation;
        String lastLockTimeout;
        /** {@link System#nanoTime()} of the last use through {@link #open()}. */
        long lastUsed = System.nanoTime();
        /** A server-side blocking wait is in flight; guarded by this session's monitor, with {@link #cancelled}. */
        boolean blocking;
        /** The wait in flight was cancelled by a release or a confirmation that needs this session now. */
        boolean cancelled;
        /** Threads that need this session for a release and cancelled its wait: no new wait starts meanwhile. */
        final AtomicInteger needed = new AtomicInteger();

        Session(String role) {
            this.role = role;
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
            SessionLockBackend.beginBlocking(this, wait);
        }

        @Override
        public void endBlocking(Duration wait) {
            SessionLockBackend.endBlocking(this, wait);
        }

        @Override
        public void checkServerId(long id) {
            SessionLockBackend.this.checkServerId(this, id);
        }

        @Override
        public boolean slicedOut(SQLException e) {
            return SessionLockBackend.slicedOut(this, e);
        }

        Connection open() throws SQLException {
            long now = System.nanoTime();
            if (conn != null && now - lastUsed > options.keepaliveIdle().toNanos() && !holdsAnything()) {
                // idle long enough for a NAT or load balancer to have dropped it without a word: a statement
                // would hang until the network timeout, so check it first (only a session holding nothing is
                // idle that long: one holding locks is probed every renewal interval)
                if (!conn.isValid((int) Math.max(1, options.probeTimeout().toSeconds()))) {
                    log.debug("{}: {} session (server id {}) did not answer after {} s idle; replacing it",
                            description, role, serverId, (now - lastUsed) / 1_000_000_000L);
                    discard();
                }
            }
            lastUsed = now;
            if (conn != null) {
                return conn;
            }
            if (closed) {
                throw new SQLException("the lock client is closed", "08003");
            }
            try {
                return openOnce();
            } catch (SQLException e) {
                if (!ConnectionSupport.isGone(e)) {
                    throw e;
                }
                // the pool handed out a connection that died idle (its server session was ended): one more try
                log.debug("{}: {} session: a pooled connection was dead ({}); trying another", description, role,
                        e.getMessage());
                return openOnce();
            }
        }

        private Connection openOnce() throws SQLException {
            Connection c = dataSource.getConnection();
            try {
                c.setAutoCommit(true);
                // a dedicated connection must not hang forever on a dead network path
                c.setNetworkTimeout(Runnable::run, (int) NETWORK_TIMEOUT.toMillis());
                // before anything is set or taken on the session, every time one opens
                String pooler = options.poolerInSessionMode() ? null : sql.poolerEvidence(c);
                if (pooler != null) {
                    throw new UnsupportedBackendException(poolerRefusal(pooler));
                }
                sql.configure(c, clientId, options);
                long first = serverId(c);
                checkNotMultiplexed(this, c, first);
                conn = c;
                serverId = first;
                generation++;
                lastLockTimeout = null;
                log.debug("{}: {} session opened (server id {})", description, role, first);
                return c;
            } catch (SQLException e) {
                ConnectionSupport.discard(dataSource, c, description + " " + role + " session that failed to open");
                if (poolerStatementClash(e)) {
                    throw new UnsupportedBackendException(poolerRefusal("its server-side prepared statements clash with other"
                            + " clients' on a shared server session (" + e.getMessage() + ", SQL state "
                            + e.getSQLState() + ")"), e);
                }
                throw e;
            } catch (RuntimeException e) {
                ConnectionSupport.discard(dataSource, c, description + " " + role + " session that failed to open");
                throw e;
            }
        }

        /**
         * The session failed, or may hold something we cannot account for: discard the connection (evicted
         * from the pool, never returned with locks or settings on it); leases on it are lost; the next use
         * opens a new session.
         */
        boolean holdsAnything() {
            return local.values().stream().anyMatch(l -> l.session == this)
                    || rwLocal.values().stream().anyMatch(st -> {
                        synchronized (st) {
                            return st.holders.values().stream().anyMatch(l -> l.session == this);
                        }
                    });
        }

        void broken(SQLException cause) {
            boolean held = holdsAnything();
            // a session that held nothing (closed by the server while idle) is routine: replaced, not a warning
            if (held) {
                log.warn("{}: {} session (server id {}) is gone or unusable; its locks are lost: {}", description,
                        role, serverId, cause == null ? "session moved" : cause.getMessage());
            } else {
                log.debug("{}: {} session (server id {}) is gone or unusable: {}", description, role, serverId,
                        cause == null ? "session moved" : cause.getMessage());
            }
            discard();
            local.values().removeIf(l -> l.session == this);
            for (Long key : List.copyOf(rwLocal.keySet())) {
                rwLocal.computeIfPresent(key, (k, st) -> {
                    synchronized (st) {
                        int before = st.holders.size();
                        st.holders.values().removeIf(l -> l.session == this);
                        st.count -= before - st.holders.size();
                        return st.count <= 0 ? null : st;
                    }
                });
            }
        }

        void discard() {
            if (conn != null) {
                ConnectionSupport.discard(dataSource, conn, description + " " + role + " session");
                conn = null;
            }
        }

        boolean holds(Local l) {
            return conn != null && l.generation == generation;
        }
    }

    private long serverId(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql.serverIdQuery())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Refuses a connection that a pooler in transaction (or statement) mode moves between server
     * sessions: while another connection holds a transaction open — pinning the server session this
     * connection last used, if the pooler shares them — the server id must not change. The first session
     * (at {@link #start}) borrows that other connection from the pool for a moment; later opens use the other
     * dedicated session if it is free, so the strategy never needs more than its two connections (and the
     * server id check on every statement still catches a session that moves).
     */
    private void checkNotMultiplexed(Session self, Connection c, long first) throws SQLException {
        if (!started) {
            Connection other = dataSource.getConnection();
            boolean clean = false;
            try {
                other.setAutoCommit(false);
                serverId(other);
                compareIds(first, serverId(c));
                other.rollback();
                other.setAutoCommit(true);
                clean = true;
            } finally {
                if (clean) {
                    other.close();
                } else {
                    // never back to the pool in an unknown transaction state (through a pooler, a failed
                    // rollback leaves the shared server connection in an aborted transaction)
                    ConnectionSupport.discard(dataSource, other, description + " pooler check connection");
                }
            }
            return;
        }
        Session peer = self == main ? waiting : main;
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
                    serverId(other);
                    compareIds(first, serverId(c));
                } finally {
                    other.rollback();
                    other.setAutoCommit(true);
                }
            } catch (SQLException e) {
                if (fatal(other, e)) {
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
            throw new UnsupportedBackendException(poolerRefusal("the connection moved from server session " + first + " to "
                    + second + " between two statements"));
        }
    }

    private String poolerRefusal(String evidence) {
        return poolerRefusal(description, evidence);
    }

    /** The refusal of a pooler in transaction mode, with the evidence found. */
    public static String poolerRefusal(String description, String evidence) {
        return description + ": " + evidence + ". It passes through a pooler; a pooler in transaction or statement"
                + " mode (such as PgBouncer with pool_mode=transaction) silently breaks session locks. Use the lease"
                + " strategy through the pooler, or give the session strategy a DataSource that connects to the"
                + " database directly (for a pooler in session mode, call poolerInSessionMode() on the builder).";
    }

    /**
     * PostgreSQL's duplicate or missing prepared statement (42P05, 26000) on a connection just opened: the
     * driver's named statements met another client's on one server session, which only a pooler that shares
     * server sessions between clients does.
     */
    private boolean poolerStatementClash(SQLException e) {
        return sql.isStatementClash(e);
    }

    /** As {@link #poolerStatementClash(SQLException)}, anywhere in a cause chain (for the builder's checks). */
    public static boolean poolerStatementClash(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException se && ("42P05".equals(se.getSQLState()) || "26000".equals(se.getSQLState()))) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /** Whether an error means the session is gone for good (as opposed to a timeout or a bad statement). */
    private static boolean fatal(Connection c, SQLException e) {
        if (ConnectionSupport.isGone(e)) {
            return true;
        }
        try {
            return c == null || c.isClosed();
        } catch (SQLException ignored) {
            return true;
        }
    }

    // ---- names -----------------------------------------------------------------------------------

    /**
     * Records the name once per client, on the session's own connection (auto-commit, so it persists whatever
     * the pool's default): borrowing a pool connection while holding the session would wait for a busy pool.
     * A plain lock's name is also claimed for the session strategy in the lease table ({@link #claimName}).
     */
    private void register(Connection c, String name, String key) throws SQLException {
        if (registeredNames.contains(key)) { // by key: a name's read-write key is registered apart
            return;
        }
        try {
            if (key.equals(sql.serverKey(name))) {
                claimName(c, name); // a plain lock's name (read-write locks are a namespace apart)
            }
            sql.insertName(c, key, name);
        } catch (SQLException e) {
            if (fatal(c, e)) {
                throw e; // the session is gone: the caller replaces it
            }
            // nothing was taken yet: the session and its leases are fine
            throw new LockBackendException(description, "recording the name of '" + name + "' in " + table
                    + "_names failed: " + e.getMessage() + " (SQL state " + e.getSQLState() + ")", e);
        }
        registeredNames.add(key);
    }

    /**
     * One name, one lock: claims {@code name} for the session strategy with a marker row in the lease table
     * (see {@link LeaseTable#SESSION_MARKER}), unless the name has a row there already, then reads the row
     * back. If it is not a marker, the name is the lease strategy's (or runOnce's), and is refused. Committed
     * before the read, whatever the connection's auto-commit default, so the read sees the row that won.
     *
     * @throws LockException if the name has a lease row
     */
    private void claimName(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.markerInsert)) {
            ps.setString(1, name);
            ps.setString(2, LeaseTable.SESSION_MARKER);
            ps.executeUpdate();
        }
        if (!c.getAutoCommit()) {
            c.commit();
        }
        String owner;
        try (PreparedStatement ps = c.prepareStatement("SELECT owner FROM " + table + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the row of '" + name + "' in " + table + " was deleted (purged) while"
                            + " claiming the name for the session strategy; try again");
                }
                owner = rs.getString(1);
            }
        } finally {
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        }
        if (!LeaseTable.SESSION_MARKER.equals(owner)) {
            throw LeaseTable.usedByLease(name, table, owner);
        }
    }

    // ---- acquisition -----------------------------------------------------------------------------

    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        if (request.mode() != LockMode.EXCLUSIVE) {
            main.lock.lock();
            try {
                return attemptRw(main, request.name(), request.mode(), request.owner(), null);
            } finally {
                main.lock.unlock();
            }
        }
        String name = request.name();
        String owner = request.owner();
        main.lock.lock();
        try {
            return reserveAndAttempt(main, name, owner, null);
        } finally {
            main.lock.unlock();
        }
    }

    /**
     * Waits on the waiting session for one slice. Not now when another thread of this client already waits
     * there or a release needs that session (then the caller polls), or when the lock is busy inside this client
     * (its release wakes the caller locally).
     */
    @Override
    public Outcome awaitGrant(AcquireRequest request, Duration slice) {
        if (waiting.needed.get() > 0 || !waiting.lock.tryLock()) {
            return new Outcome.NotNow("another thread of this client waits on the server, or a release needs it");
        }
        AcquireResult result;
        try {
            result = request.mode() == LockMode.EXCLUSIVE
                    ? reserveAndAttempt(waiting, request.name(), request.owner(), slice)
                    : attemptRw(waiting, request.name(), request.mode(), request.owner(), slice);
        } finally {
            waiting.lock.unlock();
        }
        // null from a waiting attempt: busy inside this client, or a wait that could not tell its own grant
        return result == null ? new Outcome.NotNow("busy inside this client") : new Outcome.Decided(result);
    }

    /**
     * Reserves the key inside the client, then attempts on the session (whose lock the caller holds). A key
     * reserved by another thread is busy without a round trip; for a blocking caller that means null (its
     * release inside the client wakes the caller).
     */
    private AcquireResult reserveAndAttempt(Session s, String name, String owner, Duration wait) {
        String key = sql.serverKey(name);
        Local reservation = new Local(new LeaseKey(name, owner, -1), null, 0);
        Local present = local.putIfAbsent(key, reservation);
        if (present != null) {
            return wait != null ? null : new AcquireResult.Busy(present.key.owner(), present.key.token(), null);
        }
        boolean kept = false;
        try {
            AcquireResult r = attempt(s, name, key, wait);
            if (r instanceof AcquireResult.Granted g) {
                local.put(key, new Local(new LeaseKey(name, owner, g.token()), s, s.generation));
                kept = true;
            }
            return r;
        } finally {
            if (!kept) {
                local.remove(key, reservation);
            }
        }
    }

    /** One attempt on a session (held by the caller); {@code wait} null = do not wait on the server. */
    private AcquireResult attempt(Session s, String name, String key, Duration wait) {
        return onSession(s, name, "acquire", wait, c -> {
            register(c, name, key);
            return sql.attempt(s, c, key, LockMode.EXCLUSIVE, wait);
        });
    }

    private interface SessionCall {
        AcquireResult call(Connection c) throws SQLException;
    }

    /**
     * Runs an attempt on a session (held by the caller), opening it if needed. A session whose server session
     * is gone — ended by the server while idle ({@code idle_session_timeout}, {@code wait_timeout}), dropped by
     * a NAT or load balancer, killed — is replaced and the attempt made once more: nothing survives on a gone
     * session (its leases, if any, are reported lost by the next renewal), so a fresh one is as good.
     */
    private AcquireResult onSession(Session s, String name, String what, Duration wait, SessionCall call) {
        for (int round = 0; ; round++) {
            Connection c = null;
            try {
                c = s.open();
                return call.call(c);
            } catch (SQLException e) {
                if (wait != null && slicedOut(s, e)) {
                    return new AcquireResult.Busy(null, -1, null);
                }
                boolean gone = c != null && fatal(c, e);
                // the lock may have been granted inside the failed statement (session locks ignore rollback), so
                // the session can no longer be accounted for: discard it, and its leases report lost
                s.broken(e);
                if (gone && round == 0) {
                    log.debug("{}: {} session was gone ({}); retrying the {} of '{}' on a new session", description,
                            s.role, e.getMessage(), what, name);
                    continue;
                }
                throw new LockBackendException(description, what + " of '" + name + "' on the " + s.role
                        + " session failed: " + e.getMessage() + " (SQL state " + e.getSQLState() + ")", e);
            }
        }
    }

    /** A blocking wait that ended without the lock: its timeout, a deadlock check, or our own cancel. */
    private static boolean slicedOut(Session s, SQLException e) {
        return isLockWaitTimeout(e) || (cancelledByUs(s) && isCancel(e));
    }

    private static boolean cancelledByUs(Session s) {
        synchronized (s) {
            return s.cancelled;
        }
    }

    /** PostgreSQL query_canceled; MySQL/MariaDB "query execution was interrupted" (KILL QUERY). */
    private static boolean isCancel(SQLException e) {
        return "57014".equals(e.getSQLState()) || "70100".equals(e.getSQLState()) || e.getErrorCode() == 1317;
    }

    private static boolean isLockWaitTimeout(SQLException e) {
        // PostgreSQL: lock_not_available (lock_timeout), deadlock_detected; MySQL: ER_USER_LOCK_DEADLOCK
        return "55P03".equals(e.getSQLState()) || "40P01".equals(e.getSQLState()) || e.getErrorCode() == 3058;
    }

    private void checkServerId(Session s, long id) {
        if (id != s.serverId) {
            long before = s.serverId;
            s.broken(null);
            throw new UnsupportedBackendException(description + ": the " + s.role + " session moved from server session " + before
                    + " to " + id + "; a pooler in transaction mode breaks session locks. Its locks are lost.");
        }
    }

    /** Marks a server-side blocking wait in flight on the session, so a release can cancel it. */
    private static void beginBlocking(Session s, Duration wait) {
        if (wait != null) {
            synchronized (s) {
                s.blocking = true;
                s.cancelled = false;
            }
        }
    }

    /** Ends the mark; waits, through the monitor, for a cancel being sent to finish first. */
    private static void endBlocking(Session s, Duration wait) {
        if (wait != null) {
            synchronized (s) {
                s.blocking = false;
            }
        }
    }

    /**
     * Cancels the blocking wait in flight on {@code s}, if any, from the other session (PostgreSQL
     * {@code pg_cancel_backend}, MySQL/MariaDB {@code KILL QUERY}): one round trip on a connection the client
     * already has, no pool borrow. Under the session's monitor, so the wait's statement cannot end and another
     * statement start on {@code s} before the cancel was delivered: a cancel reaches only the wait.
     */
    private void cancelBlocking(Session s) {
        Session via = s == main ? waiting : main;
        synchronized (s) {
            if (!s.blocking || s.cancelled) {
                return;
            }
            s.cancelled = true;
            long target = s.serverId;
            via.lock.lock();
            Connection c = null;
            try {
                c = via.open();
                // target is a server session id (a long the server gave us), not user input
                try (Statement st = c.createStatement()) {
                    st.execute(sql.cancelWait(target));
                }
            } catch (SQLException e) {
                log.debug("{}: cancelling the {} session's wait failed: {}", description, s.role, e.getMessage());
                if (c != null && fatal(c, e)) {
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
    private void lockForStatement(Session s) {
        if (s.lock.tryLock()) {
            return;
        }
        s.needed.incrementAndGet();
        try {
            boolean interrupted = false;
            while (true) {
                cancelBlocking(s);
                try {
                    if (s.lock.tryLock(50, TimeUnit.MILLISECONDS)) {
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
            s.needed.decrementAndGet();
        }
    }

    // ---- read-write locks (PostgreSQL shared/exclusive advisory locks) -----------------------------

    /** Reserves locally (readers share, a writer is alone), then asks the server; undoes the reservation if refused. */
    private AcquireResult attemptRw(Session s, String name, LockMode mode, String owner, Duration wait) {
        long k = sql.rwKey(name);
        boolean[] reserved = {false};
        RwState state = rwLocal.compute(k, (key, st) -> {
            if (st == null) {
                st = new RwState(mode);
            }
            synchronized (st) {
                if (st.count == 0 || (st.mode == LockMode.READ && mode == LockMode.READ)) {
                    st.mode = mode;
                    st.count++;
                    reserved[0] = true;
                }
            }
            return st;
        });
        if (reserved[0] && wait != null && mode == LockMode.READ) {
            boolean sessionReadsIt;
            synchronized (state) {
                sessionReadsIt = state.holders.values().stream().anyMatch(l -> l.session == s);
            }
            if (sessionReadsIt) {
                // a timed-out blocking wait could not tell its own grant from the session's other reads
                unreserve(k, state);
                return null;
            }
        }
        if (!reserved[0]) {
            if (wait != null) {
                return null; // busy inside this client: its release wakes us locally
            }
            synchronized (state) {
                String holder = state.holders.keySet().stream().findFirst().map(LeaseKey::owner).orElse(null);
                return new AcquireResult.Busy(holder, -1, null);
            }
        }
        boolean kept = false;
        try {
            AcquireResult r = onSession(s, name, mode.name().toLowerCase() + " acquire", wait, c -> {
                register(c, name, Long.toString(k));
                return sql.attemptRw(s, c, k, mode, wait);
            });
            if (r instanceof AcquireResult.Granted g) {
                LeaseKey lk = new LeaseKey(name, owner, g.token(), mode);
                synchronized (state) {
                    state.holders.put(lk, new Local(lk, s, s.generation));
                }
                kept = true;
            }
            return r;
        } finally {
            if (!kept) {
                unreserve(k, state);
            }
        }
    }

    private void unreserve(long k, RwState state) {
        rwLocal.computeIfPresent(k, (key, st) -> {
            synchronized (st) {
                if (st == state) {
                    st.count--;
                }
                return st.count == 0 ? null : st;
            }
        });
    }

    private boolean releaseRw(LeaseKey lease) {
        long k = sql.rwKey(lease.name());
        RwState state = rwLocal.get(k);
        if (state == null) {
            return false;
        }
        Local l;
        synchronized (state) {
            l = state.holders.get(lease);
        }
        if (l == null) {
            return false;
        }
        Session s = l.session;
        lockForStatement(s);
        Connection c = s.conn;
        try {
            if (!s.holds(l)) {
                return false;
            }
            return sql.releaseRw(c, k, lease.mode());
        } catch (SQLException e) {
            boolean gone = fatal(c, e);
            s.broken(e); // as in release(): the server frees what the discarded session held
            if (gone) {
                return false;
            }
            throw new LockBackendException(description, "release of '" + lease.name() + "' failed; the session was"
                    + " discarded, so the server frees the lock: " + e.getMessage(), e);
        } finally {
            s.lock.unlock();
            boolean removed;
            synchronized (state) {
                removed = state.holders.remove(lease) != null;
            }
            if (removed) {
                // broken() may have removed (and uncounted) it already; count each holder out once
                unreserve(k, state);
            }
        }
    }

    // ---- release and renewal ---------------------------------------------------------------------

    @Override
    public boolean release(LeaseKey lease) {
        if (lease.mode() != LockMode.EXCLUSIVE) {
            return releaseRw(lease);
        }
        String key = sql.serverKey(lease.name());
        Local l = local.get(key);
        if (l == null || !l.key.equals(lease)) {
            return false;
        }
        Session s = l.session;
        lockForStatement(s);
        Connection c = s.conn;
        try {
            if (!s.holds(l)) {
                local.remove(key, l);
                return false;
            }
            boolean released = sql.release(c, key);
            local.remove(key, l);
            return released;
        } catch (SQLException e) {
            // a release that failed leaves the lock possibly held on a live session: discard the session so the
            // server frees it (the session's other leases report lost)
            boolean gone = fatal(c, e);
            s.broken(e);
            if (gone) {
                return false; // the server freed it with the session
            }
            throw new LockBackendException(description, "release of '" + lease.name() + "' failed; the session was"
                    + " discarded, so the server frees the lock: " + e.getMessage(), e);
        } finally {
            s.lock.unlock();
        }
    }

    /** The keepalive probe: each session that holds leases is checked; a dead one loses them all. */
    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        probe(main);
        probe(waiting);
        Set<LeaseKey> alive = new HashSet<>();
        for (LeaseKey k : leases) {
            if (k.mode() != LockMode.EXCLUSIVE) {
                RwState st = rwLocal.get(sql.rwKey(k.name()));
                if (st != null) {
                    synchronized (st) {
                        Local l = st.holders.get(k);
                        if (l != null && l.session.holds(l)) {
                            alive.add(k);
                        }
                    }
                }
                continue;
            }
            Local l = local.get(sql.serverKey(k.name()));
            if (l != null && l.key.equals(k) && l.session.holds(l)) {
                alive.add(k);
            }
        }
        return alive;
    }

    /**
     * Probes a session that holds leases. A session in use by another statement (an attempt, a release, a
     * blocking wait) is alive by that use — the statement reports its own failure — so the probe never waits
     * for it: a busy client must not look dead.
     */
    private void probe(Session s) {
        if (!s.lock.tryLock()) {
            return;
        }
        Connection c = s.conn;
        try {
            if (c == null) {
                return;
            }
            try (Statement st = c.createStatement()) {
                st.setQueryTimeout((int) Math.max(1, options.probeTimeout().toSeconds()));
                try (ResultSet rs = st.executeQuery(sql.serverIdQuery())) {
                    rs.next();
                    checkServerId(s, rs.getLong(1));
                }
            }
        } catch (SQLException e) {
            if (fatal(c, e)) {
                s.broken(e);
                return;
            }
            throw new LockBackendException(description, "keepalive probe of the " + s.role + " session failed: "
                    + e.getMessage(), e);
        } catch (LockException e) {
            log.warn(e.getMessage());
        } finally {
            s.lock.unlock();
        }
    }

    /**
     * One round trip on the main session: does the server show the grant held by the session that took it?
     * PostgreSQL: {@code pg_locks} has the key, in the grant's mode, granted to that session's backend pid;
     * MySQL/MariaDB: {@code IS_USED_LOCK(key)} is that session's connection id. A session that ended frees its
     * locks at once on the server, so this is exact; the main session is used whichever session holds the
     * grant, so a blocking wait in flight on the waiting session is not disturbed.
     */
    /** A keepalive probe is skipped for a session busy with another statement: that session counts as alive. */
    @Override
    public boolean renewalAsksTheServer() {
        return false;
    }

    @Override
    public boolean confirm(LeaseKey lease) {
        Local l = localOf(lease);
        if (l == null) {
            return false;
        }
        Session holder = l.session;
        long holderId = holder.serverId;
        if (!holder.holds(l)) {
            return false;
        }
        for (int round = 0; ; round++) {
            main.lock.lock();
            Connection c = null;
            try {
                c = main.open();
                SessionStatements.Answer answer = sql.confirm(c, lease, holderId);
                checkServerId(main, answer.serverId());
                return answer.held() && holder.holds(l) && holder.serverId == holderId;
            } catch (SQLException e) {
                boolean gone = c != null && fatal(c, e);
                if (gone) {
                    main.broken(e);
                    if (holder == main) {
                        return false; // the holding session is gone, and its locks with it
                    }
                    if (round == 0) {
                        continue;
                    }
                }
                throw new LockBackendException(description, "confirming '" + lease.name() + "' (token "
                        + lease.token() + ") failed: " + e.getMessage() + " (SQL state " + e.getSQLState() + ")", e);
            } catch (LockException e) {
                // the main session moved (a pooler): it was discarded, and its leases are lost
                if (holder == main) {
                    return false;
                }
                throw new LockBackendException(description, "confirming '" + lease.name() + "' failed: "
                        + e.getMessage(), e);
            } finally {
                main.lock.unlock();
            }
        }
    }

    /** The client's record of a grant, or null if it holds no such grant. */
    private Local localOf(LeaseKey lease) {
        if (lease.mode() != LockMode.EXCLUSIVE) {
            RwState st = rwLocal.get(sql.rwKey(lease.name()));
            if (st == null) {
                return null;
            }
            synchronized (st) {
                return st.holders.get(lease);
            }
        }
        Local l = local.get(sql.serverKey(lease.name()));
        return l != null && lease.equals(l.key) ? l : null;
    }

    // ---- introspection ---------------------------------------------------------------------------

    @Override
    public List<LockInfo> inspect() {
        List<LockInfo> out;
        // on the main session: the client's two connections are all it needs, even for a listing
        main.lock.lock();
        Connection c = null;
        try {
            c = main.open();
            out = sql.inspect(c);
        } catch (SQLException e) {
            if (c != null && fatal(c, e)) {
                main.broken(e);
            }
            throw new LockBackendException(description, "listing session locks failed: " + e.getMessage(), e);
        } finally {
            main.lock.unlock();
        }
        return out;
    }

    /** The server ids of this client's two sessions (for tests and introspection); -1 when not open. */
    public List<Long> sessionIds() {
        List<Long> ids = new ArrayList<>();
        ids.add(main.conn == null ? -1 : main.serverId);
        ids.add(waiting.conn == null ? -1 : waiting.serverId);
        return ids;
    }

    @Override
    public void close() {
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
        local.clear();
        rwLocal.clear();
    }
}
