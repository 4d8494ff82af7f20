package dev.baton.jdbc.session;

import dev.baton.jdbc.internal.SessionKeys;
import dev.baton.LockBackendException;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.ReadWriteModes;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

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
 *       client first reserves the lock key locally; a key reserved by another thread is busy
 *       ({@link Holds}, the one record of what the client holds and attempts).</li>
 *   <li>One statement takes the lock and, only if granted, draws the fencing token from the lease
 *       table's sequence (MySQL: bumps the counter row next) and returns the session's server id.</li>
 *   <li>Every statement checks the server id of its session: a change means the connection passes
 *       through a pooler that moves it between server sessions, which silently breaks session locks; a
 *       session that opens is first checked for such a pooler ({@link PoolerCheck}).</li>
 *   <li>Renewal is a keepalive probe of each session. A session that died (terminated, killed, network
 *       reset) loses every lease on it, at once; a probe that cannot tell (timeout) leaves the leases to
 *       their conservative deadline; a session busy with another statement is alive by that use
 *       ({@link Session#probe}).</li>
 *   <li>An attempt that finds its session gone (closed by the server while idle, dropped by the network)
 *       replaces the session and tries once more: nothing survives on a gone session ({@link Session#run}).</li>
 *   <li>A release (or a statement that must run on the waiting session) while another thread's blocking
 *       wait is in flight there cancels that wait from the main session ({@code pg_cancel_backend},
 *       {@code KILL QUERY}) rather than waiting out its slice; no new wait starts until it ran. A wait
 *       granted in the instant it was cancelled is kept as a grant (checked on the session;
 *       {@link ServerWait}).</li>
 *   <li>{@link #confirm} asks the server, on the main session, whether the holding session still holds
 *       the key: {@link dev.baton.Lease#checkValid()} is exact.</li>
 * </ol>
 *
 * <p>Keys: PostgreSQL's 64-bit key is the first 8 bytes of SHA-256 over {@code table + U+0000 + name}
 * (big-endian, signed); MySQL's lock name is {@code "baton:"} plus the unpadded base64url SHA-256 of the
 * same bytes (49 characters, within MySQL's 64). Two names whose PostgreSQL keys collide (about 1 in
 * 10<sup>7</sup> among a million names) exclude each other: a false contention, never a false sharing.
 * Names are recorded once per client in {@code <table>_names} so {@code baton list} shows them whole
 * ({@link Names}). ({@link SessionKeys} computes the keys.)
 *
 * <p>Each dialect's statements, and what else it does differently (session set-up, cancelling a wait,
 * read-write locks), are in its {@link SessionStatements}: {@link PostgresSessionStatements},
 * {@link MySqlSessionStatements}; this class holds the algorithm only. Its parts: {@link Sessions} (the two
 * dedicated sessions and what they share), {@link Session} (one of them: opening, replacing, keepalive),
 * {@link ServerWait} (a session's server-side blocking wait, and cancelling it), {@link PoolerCheck} (refusing a
 * pooler in transaction mode), {@link Holds} (what the client holds and attempts), {@link Names} (recording and
 * claiming names), {@link ReadWriteLocks} (PostgreSQL's shared and exclusive advisory locks).
 */
public class SessionLockBackend implements BlockingWait, ConfirmsGrants {
    private final SessionStatements sql;
    private final String description;
    private final Sessions sessions;
    private final Session main;
    private final Session waiting;
    private final Holds holds;
    private final Names names;
    private final ReadWriteLocks readWrite;

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
        this.sql = statements;
        this.description = statements.description;
        this.sessions = new Sessions(dataSource, statements, options);
        this.main = sessions.main;
        this.waiting = sessions.waiting;
        this.holds = sessions.holds;
        this.names = new Names(statements);
        this.readWrite = new ReadWriteLocks(sessions, names);
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void start(String clientId) {
        sessions.start(clientId);
    }

    // ---- acquisition -----------------------------------------------------------------------------

    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        if (request.mode() != LockMode.EXCLUSIVE) {
            main.lock.lock();
            try {
                return readWrite.attempt(main, request.name(), request.mode(), request.owner(), null);
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
        if (waiting.serverWait.needed() || !waiting.lock.tryLock()) {
            return new Outcome.NotNow("another thread of this client waits on the server, or a release needs it");
        }
        AcquireResult result;
        try {
            result = request.mode() == LockMode.EXCLUSIVE
                    ? reserveAndAttempt(waiting, request.name(), request.owner(), slice)
                    : readWrite.attempt(waiting, request.name(), request.mode(), request.owner(), slice);
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
        Holds.Local reservation = new Holds.Local(new LeaseKey(name, owner, -1), null, 0);
        Holds.Local present = holds.reserve(key, reservation);
        if (present != null) {
            return wait != null ? null : new AcquireResult.Busy(present.key().owner(), present.key().token(), null);
        }
        boolean kept = false;
        try {
            AcquireResult r = attempt(s, name, key, wait);
            if (r instanceof AcquireResult.Granted g) {
                holds.keep(key, new Holds.Local(new LeaseKey(name, owner, g.token()), s, s.generation));
                kept = true;
            }
            return r;
        } finally {
            if (!kept) {
                holds.remove(key, reservation);
            }
        }
    }

    /** One attempt on a session (held by the caller); {@code wait} null = do not wait on the server. */
    private AcquireResult attempt(Session s, String name, String key, Duration wait) {
        return s.run(name, "acquire", wait, c -> {
            names.register(c, name, key);
            return sql.attempt(s, c, key, LockMode.EXCLUSIVE, wait);
        });
    }

    // ---- release and renewal ---------------------------------------------------------------------

    @Override
    public boolean release(LeaseKey lease) {
        if (lease.mode() != LockMode.EXCLUSIVE) {
            return readWrite.release(lease);
        }
        String key = sql.serverKey(lease.name());
        Holds.Local l = holds.at(key);
        if (l == null || !l.key().equals(lease)) {
            return false;
        }
        Session s = l.session();
        s.serverWait.lockForStatement();
        Connection c = s.conn;
        try {
            if (!s.holds(l)) {
                holds.remove(key, l);
                return false;
            }
            boolean released = sql.release(c, key);
            holds.remove(key, l);
            return released;
        } catch (SQLException e) {
            // a release that failed leaves the lock possibly held on a live session: discard the session so the
            // server frees it (the session's other leases report lost)
            boolean gone = Session.fatal(c, e);
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
        main.probe();
        waiting.probe();
        Set<LeaseKey> alive = new HashSet<>();
        for (LeaseKey k : leases) {
            if (holds.alive(k)) {
                alive.add(k);
            }
        }
        return alive;
    }

    /** A keepalive probe is skipped for a session busy with another statement: that session counts as alive. */
    @Override
    public boolean renewalAsksTheServer() {
        return false;
    }

    // ---- confirmation ----------------------------------------------------------------------------

    /**
     * One round trip on the main session: does the server show the grant held by the session that took it?
     * PostgreSQL: {@code pg_locks} has the key, in the grant's mode, granted to that session's backend pid;
     * MySQL/MariaDB: {@code IS_USED_LOCK(key)} is that session's connection id. A session that ended frees its
     * locks at once on the server, so this is exact; the main session is used whichever session holds the
     * grant, so a blocking wait in flight on the waiting session is not disturbed.
     */
    @Override
    public boolean confirm(LeaseKey lease) {
        Holds.Local l = holds.granted(lease);
        if (l == null) {
            return false;
        }
        Session holder = l.session();
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
                main.checkServerId(answer.serverId());
                return answer.held() && holder.holds(l) && holder.serverId == holderId;
            } catch (SQLException e) {
                boolean gone = c != null && Session.fatal(c, e);
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
            if (c != null && Session.fatal(c, e)) {
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
        return sessions.ids();
    }

    @Override
    public void close() {
        sessions.close();
    }

    // ---- pooler refusal, for the builder ----------------------------------------------------------

    /** The refusal of a pooler in transaction mode, with the evidence found. */
    public static String poolerRefusal(String description, String evidence) {
        return PoolerCheck.refusal(description, evidence);
    }

    /**
     * PostgreSQL's duplicate or missing prepared statement (42P05, 26000) anywhere in a cause chain (for the
     * builder's checks): the driver's named statements met another client's on one server session, which only a
     * pooler that shares server sessions between clients does.
     */
    public static boolean poolerStatementClash(Throwable e) {
        return PoolerCheck.statementClashInChain(e);
    }
}
