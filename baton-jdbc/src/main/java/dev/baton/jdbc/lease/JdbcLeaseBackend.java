package dev.baton.jdbc.lease;

import dev.baton.ForcedRelease;
import dev.baton.LockBackendException;
import dev.baton.LockInfo;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.ConnectionSupport.SqlCall;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.readwrite.ReadWriteTable;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsTimeLeft;
import dev.baton.spi.WaitingQueue;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The lease-row strategy over a {@link DataSource}: a row per lock in the lease table, with owner, fencing
 * token and expiry by the database clock. Each operation borrows a connection for one call, in auto-commit
 * mode whatever the pool's default, and gives it back.
 *
 * <p>Algorithm:
 * <ol>
 *   <li>Acquire (fair): look first, in one read: the live holder, and how many live waiters of other owners are
 *       ahead of the caller in the lock's line ({@code <table>_queue}) — unless this is the first attempt of an
 *       acquisition at a name this client has not found contended in the last second: then it goes straight to
 *       the grant, which checks the row and the line itself (an uncontended acquire is one statement on
 *       PostgreSQL and on MariaDB (the first use of a name: two, the second inserts its row), one short
 *       transaction on MySQL and SQLite). A held lock, or a free one kept for someone
 *       ahead, costs no write for the row: a waiting request takes a ticket (once per acquisition), which lives
 *       {@link #PLACE_TTL} (a second) after its last heartbeat, whatever the waiter's lease. Otherwise one step of the dialect's
 *       {@link LeaseTable#tryAcquire} takes the row if it is free (expired, or on MariaDB released) <em>and</em>
 *       nobody else is ahead in line, drawing a fresh token under the row lock and deleting the caller's ticket in
 *       the same commit (MariaDB: in a statement right after; a name's first use inserts its row, the token drawn
 *       before), or reports its holder. A releasing thread or client asking again is not in line, so it never barges past
 *       waiters (it may while nobody waits). A row that is the session strategy's marker is refused
 *       ({@link dev.baton.jdbc.StrategyConflictException}): one name, one lock.</li>
 *   <li>Keep: while a client has places in line, one statement every {@link #HEARTBEAT} (200 ms) refreshes them all,
 *       not flushed at commit where the dialect allows ({@link LeaseTable#refreshPlaces}), whether their waiters are
 *       trying, parked or blocked on a bell; so a place lives exactly as long as its waiter and its client, and a
 *       waiter killed in line keeps a free lock from the next one for about a second, whatever its lease. On
 *       PostgreSQL the same statement finds the waiters whose turn it is (the release's notice named a head that
 *       died) and wakes them. Every 5 s it also deletes the line's tickets dead for more than 10 s, of every lock; a
 *       full line (MariaDB's MEMORY table) is cleaned of every dead ticket at once, and if still full its waiters wait
 *       without a place, polling.</li>
 *   <li>Withdraw: a waiter that stops without a grant deletes its ticket; {@link #close()} deletes every ticket
 *       the client still has.</li>
 *   <li>Wake: PostgreSQL with a listener, by {@code NOTIFY} naming the head of the line, whose next attempt goes
 *       straight to the grant (a waiter takes its place before it looks, so a release before its ticket, which named
 *       nobody, is seen by that look; a first attempt that went straight to the grant takes its place after, and
 *       looks once more); on a MariaDB server by bells ({@link LineBells}): each waiter waits on the server for
 *       the bell of the one ahead of it, the head for the holder's ({@link Ringing}); elsewhere, and where there is
 *       no bell to wait on, each waiter is told when to look again by {@link AcquireResult.Busy#nextTry}, paced by
 *       how fast its place in line moves.</li>
 *   <li>Renew: extend every live row whose name, owner and token match, in as few statements as the dialect
 *       allows ({@link LeaseTable#renewBatch}); the rows not extended are lost.</li>
 *   <li>Release: free the row where name, owner and token match ({@code expires_at} no later than now; MariaDB:
 *       an entry naming the grant in the MEMORY table {@code <table>_released}, no write of the row);
 *       PostgreSQL announces it on the table's {@code NOTIFY} channel in the same statement, and
 *       {@link PgReleaseListener} wakes the waiters of other clients.</li>
 *   <li>Confirm: one read, the row matches name, owner and token and has not expired.</li>
 *   <li>Read and write modes run on {@code <table>_rw} ({@link ReadWriteTable}).</li>
 *   <li>Idempotent calls (renew, release, confirm) are made again at once if the pool handed out a dead
 *       connection, or (a few times) if a REPEATABLE READ pool default made a statement fail with 40001.</li>
 * </ol>
 * The SQL of each dialect is in its {@link LeaseTable}: {@link PostgresLeaseTable}, {@link MySqlFamilyLeaseTable}
 * (MariaDB, MySQL), {@link SqliteLeaseTable}.
 *
 * <p>A driver error becomes a {@link LockBackendException} naming the backend and operation.
 * Connections that failed mid-statement are closed by the pool (HikariCP evicts on SQL state class 08 and
 * on socket timeouts), never reused by Baton itself: it keeps no connection between calls, except the
 * PostgreSQL listener's own and, on MariaDB under contention, the one that keeps the client's bells.
 */
public class JdbcLeaseBackend implements WaitingQueue, ReadWriteModes, ConfirmsGrants, ReportsTimeLeft {
    private final DataSource dataSource;
    private final DataSource notifications;
    private final LeaseTable table;
    private final ReadWriteTable rwTable;
    private final String description;
    private final DialectTraits traits;
    private PgReleaseListener pgListener;
    private ReleaseListener listener;
    /** PostgreSQL with a listener: the core's listener, which wakes this client's waiters; else null. */
    private volatile ReleaseListener coreListener;
    /** MariaDB, MySQL: the bells this client's holders and waiters keep for the waiters behind them, or null ({@link Ringing}). */
    private final LineBells bells;
    /** How many of this client's waiters may wait on a bell at once (each on a pooled connection). */
    private final Semaphore bellWaits;

    /**
     * @param notifications where the PostgreSQL release listener {@code LISTEN}s (the main data source, or a
     *                      direct one the user gave), or null for none: waiters in other clients then poll
     */
    private JdbcLeaseBackend(DataSource dataSource, LeaseTable table, DataSource notifications, boolean direct,
                             int bellWaiters) {
        this.dataSource = dataSource;
        this.notifications = notifications;
        this.table = table;
        this.traits = DialectTraits.of(table.dialect(), direct);
        this.rwTable = ReadWriteTable.of(table.dialect(), table.table);
        this.description = "jdbc-lease/" + table.dialect().id() + " (table " + table.table + ")";
        this.bells = bellWaiters > 0 ? new LineBells(dataSource, table.table, description) : null;
        this.bellWaits = new Semaphore(Math.max(0, bellWaiters));
    }

    /**
     * The backend for {@code table}: on PostgreSQL with a listening data source one that {@link NotifiesReleases}
     * (LISTEN/NOTIFY); on MariaDB and MySQL one whose head of a line waits on the holder's bell ({@link Ringing}),
     * unless the pool is a HikariCP pool of fewer than {@link #BELL_POOL_SIZE} connections; elsewhere one whose
     * waiters poll, paced by their line.
     *
     * @param notifications where the PostgreSQL release listener {@code LISTEN}s, or null for none
     */
    public static JdbcLeaseBackend create(DataSource dataSource, LeaseTable table, DataSource notifications) {
        return create(dataSource, table, notifications, false, table.dialect() == dev.baton.jdbc.Dialect.MARIADB);
    }

    /**
     * As {@link #create(DataSource, LeaseTable, DataSource)}; {@code direct}: {@code dataSource} was found to reach
     * PostgreSQL without a pooler, so statements are left to the driver's prepared-statement cache instead of being
     * parsed and planned by the server on every call (the grant is a CTE whose planning cost most of an
     * uncontended acquire: parse 0.3–0.7 ms, bind 0.5 ms, execute 0.2 ms on this project's machines);
     * {@code mariaDbServer}: the server is MariaDB, whose {@code GET_LOCK} waits fractions of a second (MySQL's waits
     * whole seconds), so the MariaDB and MySQL dialects ring bells there ({@link Ringing}) and nowhere else.
     */
    public static JdbcLeaseBackend create(DataSource dataSource, LeaseTable table, DataSource notifications,
                                          boolean direct, boolean mariaDbServer) {
        if (notifications != null && table.releaseChannel() != null) {
            return new Notifying(dataSource, table, notifications, direct);
        }
        int bellWaiters = mariaDbServer ? bellWaiters(dataSource, table) : 0;
        return bellWaiters > 0 ? new Ringing(dataSource, table, direct, bellWaiters)
                : new JdbcLeaseBackend(dataSource, table, null, direct, 0);
    }

    /**
     * The least HikariCP pool that bells are used with: one connection keeps the client's bells, one waits on a
     * bell, and one is left for the statements.
     */
    public static final int BELL_POOL_SIZE = 3;

    /** The most waiters of one client that wait on bells at once (each on a connection of the pool). */
    public static final int BELL_WAITERS = 2;

    /**
     * How many waiters of a client on MariaDB may wait on bells at once, each on a connection of the pool for up to
     * a slice: {@link #BELL_WAITERS}, and with HikariCP no more than the pool's size less two — the bell connection,
     * and one always left for the statements, among them the releases that wake the waiters (none below
     * {@link #BELL_POOL_SIZE}: then no bells, and waiters poll); 0 on other databases. So a contended client borrows
     * at most three connections beyond its statements' (the bell connection and two waits); its other waiters poll.
     */
    private static int bellWaiters(DataSource dataSource, LeaseTable table) {
        if (table.dialect() != dev.baton.jdbc.Dialect.MARIADB && table.dialect() != dev.baton.jdbc.Dialect.MYSQL) {
            return 0;
        }
        java.util.OptionalInt size = ConnectionSupport.maximumPoolSize(dataSource);
        if (size.isEmpty()) {
            return BELL_WAITERS;
        }
        if (size.getAsInt() < BELL_POOL_SIZE) {
            org.slf4j.LoggerFactory.getLogger(JdbcLeaseBackend.class).info("table {}: the pool's maximumPoolSize is {},"
                    + " below the {} that waiting on bells needs; waiters poll, paced by their line", table.table,
                    size.getAsInt(), BELL_POOL_SIZE);
            return 0;
        }
        return Math.min(BELL_WAITERS, size.getAsInt() - 2);
    }

    /**
     * The lease backend on MariaDB and MySQL: each waiter waits on the server for the bell of the one ahead of it
     * ({@link LineBells}) — the head for the holder's — instead of polling (as many at once as the pool spares; the
     * others poll, paced by the line).
     */
    public static final class Ringing extends JdbcLeaseBackend implements BlockingWait {
        private Ringing(DataSource dataSource, LeaseTable table, boolean direct, int bellWaiters) {
            super(dataSource, table, null, direct, bellWaiters);
        }

        @Override
        public Outcome awaitGrant(AcquireRequest request, Duration slice) {
            return awaitBell(request, slice);
        }
    }

    /** The lease backend on PostgreSQL with a listener connection: releases wake waiters in other clients. */
    public static final class Notifying extends JdbcLeaseBackend implements NotifiesReleases {
        private Notifying(DataSource dataSource, LeaseTable table, DataSource notifications, boolean direct) {
            super(dataSource, table, notifications, direct, 0);
        }

        @Override
        public void listen(ReleaseListener listener) {
            super.coreListener = listener;
            super.listener = new ReleaseListener() {
                @Override
                public void released(String name) {
                    listener.released(name);
                }

                @Override
                public void released(String name, String owner) {
                    named(name, owner);
                    listener.released(name, owner);
                }

                @Override
                public void resynchronize() {
                    listener.resynchronize();
                }
            };
        }
    }

    /**
     * Waiters of this client that a release notice named as the head of a line, by owner and name, with the
     * {@link System#nanoTime()} of the notice: such a waiter's next attempt goes straight to the grant (the lock was
     * just freed for it), without the look. Entries end at that attempt; a notice older than
     * {@link #CONTENDED_NANOS} is ignored (the waiter left, or looked again anyway).
     */
    private final ConcurrentHashMap<String, Long> namedHeads = new ConcurrentHashMap<>();

    private static String headKey(String name, String owner) {
        return owner.length() + ":" + owner + name;
    }

    /** A notice named {@code owner} next in the line of {@code name}: remembered only for this client's waiters. */
    void named(String name, String owner) {
        String self = ownerPrefix;
        if (self != null && owner.startsWith(self)) {
            if (namedHeads.size() >= 10_000) {
                namedHeads.clear(); // a hint: a waiter forgotten early only looks before its grant
            }
            namedHeads.put(headKey(name, owner), System.nanoTime());
        }
    }

    /**
     * Whether a notice named this waiter the head of its line lately (and forgets it). Only a request that is in
     * line counts: a notice can arrive after its waiter was granted (woken by the release in its own client) or left,
     * and the same thread's next acquisition must not take it for its own turn.
     */
    private boolean namedHead(AcquireRequest request) {
        if (namedHeads.isEmpty()) {
            return false;
        }
        Long at = namedHeads.remove(headKey(request.name(), request.owner()));
        return at != null && System.nanoTime() - at < CONTENDED_NANOS && places.containsKey(request);
    }

    /** The waiter's place ended (granted, or it left): a notice naming it from now on is not its turn. */
    private void forgetNamed(AcquireRequest request) {
        if (!namedHeads.isEmpty()) {
            namedHeads.remove(headKey(request.name(), request.owner()));
        }
    }

    /** The pool this backend borrows from, shared with the client's transaction strategies. */
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public String description() {
        return description;
    }

    /** {@code <client id>#}: how the owners of this client's requests begin (the core's {@link AcquireRequest#owner()}). */
    private volatile String ownerPrefix;

    @Override
    public void start(String clientId) {
        ownerPrefix = clientId + "#";
        if (listener != null && table.releaseChannel() != null) {
            pgListener = new PgReleaseListener(notifications, table.releaseChannel(), listener, description);
            pgListener.start();
        }
    }

    /** Attempts of an idempotent call that failed with a serialization failure (40001), the first included. */
    private static final int SERIALIZATION_ATTEMPTS = 4;

    /**
     * Borrows a connection for one call in auto-commit mode, whatever the pool's default, by
     * {@link ConnectionSupport#autoCommitted}. (Isolation is not asked for: on PostgreSQL that costs a round
     * trip per call; the statements that care handle it themselves.)
     */
    private <T> T run(String what, SqlCall<T> call) {
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
    private <T> T run(String what, SqlCall<T> call, boolean idempotent) {
        for (int attempt = 1; ; attempt++) {
            try {
                return attempt(attempt == 1 ? what : what + " (attempt " + attempt + ")", call);
            } catch (LockBackendException e) {
                if (!idempotent || !(e.getCause() instanceof SQLException se)) {
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
        try {
            return ConnectionSupport.autoCommitted(dataSource, traits, call);
        } catch (SQLException e) {
            throw new LockBackendException(description, what + " failed: " + e.getMessage()
                    + " (SQL state " + e.getSQLState() + ")", e);
        }
    }

    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        String name = request.name();
        if (request.mode() != LockMode.EXCLUSIVE) {
            return run(request.mode().name().toLowerCase() + " acquire of '" + name + "'",
                    c -> rwTable.tryAcquire(c, name, request.mode(), request.owner(), request.leaseTime().toMillis()));
        }
        String owner = request.owner();
        long leaseMillis = request.leaseTime().toMillis();
        boolean waits = request.patience() == AcquireRequest.Patience.WAIT;
        bellFor.remove(request);
        return run("acquire of '" + name + "'", c -> {
            // a waiter that a release notice named the head of the line grants itself at once, without a look
            if (!namedHead(request) && (places.containsKey(request) || recentlyContended(name))) {
                if (pgListener != null && !places.containsKey(request)) {
                    // PostgreSQL: a waiter takes its place before it looks, so it is in line one statement sooner
                    // and a release after its ticket names it; the look then sees any release before it (no second
                    // look after the ticket, as afterNewPlace makes for a place taken after the look)
                    keepPlace(c, request, waits, UNKNOWN_AHEAD);
                }
                LeaseTable.Look look = table.look(c, name, owner, bells != null);
                if (look.holder() != null) {
                    LeaseTable.refuseSessionMarker(look.holder(), name, table.table);
                    contended(name);
                    boolean newPlace = keepPlace(c, request, waits, look.ahead());
                    waitOnBell(request, waits, look, look.holder(),
                            System.nanoTime() + look.holder().remaining().toNanos());
                    return afterNewPlace(c, request, newPlace, inLine(request, look, look.holder()));
                }
                if (look.ahead() > 0) {
                    // free, but kept for the waiter ahead in line: no write for the row, a place in line for us
                    contended(name);
                    boolean newPlace = keepPlace(c, request, waits, look.ahead());
                    waitOnBell(request, waits, look, LINE_AHEAD, Long.MAX_VALUE);
                    return afterNewPlace(c, request, newPlace, inLine(request, look, LINE_AHEAD));
                }
            }
            // (uncontended as far as this client knows, the look is skipped: the grant itself takes the row only if
            // it is free and nobody else is in line, so the look would only cost a round trip)
            AcquireResult result = table.tryAcquire(c, name, owner, leaseMillis, places.containsKey(request));
            if (result instanceof AcquireResult.Granted granted) {
                return granted(request, granted);
            }
            LeaseTable.refuseSessionMarker(result, name, table.table);
            contended(name);
            AcquireResult.Busy busy = (AcquireResult.Busy) result;
            // a free row that the line kept for another waiter has no holder and nothing left to run
            AcquireResult.Busy answer = busy.holder() == null || busy.remaining() == null || busy.remaining().isZero()
                    ? LINE_AHEAD : busy;
            boolean newPlace = keepPlace(c, request, waits, UNKNOWN_AHEAD);
            return afterNewPlace(c, request, newPlace, inLine(request, new LeaseTable.Look(answer, UNKNOWN_AHEAD),
                    answer));
        });
    }

    /**
     * How long a busy answer for a name counts as contention in this client: for that long after the last one, a
     * first attempt at the name looks before it writes (a losing grant statement still locks the row and commits
     * on some servers, a read does not); after it, a first attempt goes straight to the grant.
     */
    private static final long CONTENDED_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Names found held, or kept for a waiter, by an attempt of this client lately: the {@link System#nanoTime()} then. */
    private final ConcurrentHashMap<String, Long> contention = new ConcurrentHashMap<>();

    private void contended(String name) {
        if (contention.size() >= 10_000) {
            contention.clear(); // a hint, not state: a name forgotten early costs one attempt without a look
        }
        contention.put(name, System.nanoTime());
    }

    private boolean recentlyContended(String name) {
        Long at = contention.get(name);
        if (at == null) {
            return false;
        }
        if (System.nanoTime() - at < CONTENDED_NANOS) {
            return true;
        }
        contention.remove(name, at);
        return false;
    }

    /**
     * A grant ends the request's place in line; on MariaDB and MySQL the holder of a contended lock (its grantee
     * waited in line, or this client found the name held lately) arms the lock's bell for the next head.
     */
    private AcquireResult granted(AcquireRequest request, AcquireResult.Granted granted) {
        Place place = places.remove(request);
        forgetNamed(request);
        holderKeepsNoBell.remove(request);
        if (bells != null) {
            if (place != null || recentlyContended(request.name())) {
                bells.arm(bells.holderBell(request.name()), granted.token());
            }
            if (place != null && place.bell() != null) {
                bells.letGo(place.bell(), 0); // after the holder's bell: the waiter this wakes finds it armed
            }
        }
        return granted;
    }

    /**
     * MariaDB: the holder's bell of {@code name}, if this client keeps it for the grant with {@code token}, is let go
     * (the lease was released, or found lost), which wakes the head of the line.
     */
    private void letGoHoldersBell(String name, long token) {
        if (bells != null) {
            bells.letGo(bells.holderBell(name), token);
        }
    }

    /**
     * The bell each request of this client waits on next (MariaDB, MySQL), as its last attempt found: the holder's
     * bell for the head of the line behind a live holder, else the ticket bell of the waiter right ahead. Set by an
     * attempt, taken by the wait that follows it.
     */
    private final ConcurrentHashMap<AcquireRequest, BellWait> bellFor = new ConcurrentHashMap<>();

    /**
     * A wait on {@code bell}: {@code holders} (the holder's bell: rung, the waiter grants itself) or the ticket bell of
     * the waiter right ahead (rung, that waiter has just been granted, so this one is now the head, or it left the
     * line; either way this one waits on the holder's bell next, and a grant out of turn is refused by the line;
     * {@link #awaitBell}); {@code busy}: the answer
     * while it rings not; {@code endsNanos}: the {@link System#nanoTime()} after which waiting on it is pointless
     * (the holder's lease ends).
     */
    private record BellWait(String bell, boolean holders, AcquireResult.Busy busy,
                            long endsNanos) {
    }

    /** After a look that found the lock held or kept: which bell the waiting request waits on next, if any. */
    private void waitOnBell(AcquireRequest request, boolean waits, LeaseTable.Look look, AcquireResult.Busy busy,
                            long endsNanos) {
        if (bells == null || !waits || closed) {
            return;
        }
        if (look.ahead() == 0 && look.holder() != null) {
            bellFor.put(request, new BellWait(bells.holderBell(request.name()), true, busy, endsNanos));
        } else if (look.ahead() > 0 && look.predecessor() != null) {
            bellFor.put(request, new BellWait(bells.ticketBell(request.name(), look.predecessor(),
                    look.predecessorSince()), false, busy, Long.MAX_VALUE));
        }
    }

    /**
     * Per waiting request, the token of the holder its wait found holding the lock and keeping no bell
     * ({@link #awaitBell}): until that grant ends, the request's waits on the holder's bell poll without trying the
     * grant (three statements on MariaDB when the lock is held) each time.
     */
    private final ConcurrentHashMap<AcquireRequest, Long> holderKeepsNoBell = new ConcurrentHashMap<>();

    /**
     * The wait of a waiter in line (MariaDB, MySQL): on the bell its last attempt chose ({@link #waitOnBell}), at
     * most {@code slice} (and, for the holder's bell, no longer than the holder's lease plus a millisecond).
     * <ul>
     *   <li>The holder's bell rung: the waiter goes straight to the grant, on the same connection.</li>
     *   <li>The ticket bell of the waiter right ahead rung: that waiter was granted, so this one is now the head (or
     *       it left the line); it waits on the holder's bell for the rest of the slice (a grantee arms it before it
     *       lets its ticket bell go), then goes to the grant, or, if the slice ends first, looks again.</li>
     *   <li>Nobody keeps the holder's bell: it was let go before this waiter came (the lease was released, or lost),
     *       or not armed (an uncontended grant, or an arm that failed or has not run yet). The grant tells which at
     *       once; only if the same holder still has the lock does the waiter fall back to the line-paced poll, and
     *       for the rest of that holder's lease it polls without the grant. (It used to fall back always, and a
     *       holder that released within a millisecond or so of its grant, before its head came to the bell, cost
     *       every hand-over a poll.)</li>
     * </ul>
     * The grant checks the row and the line itself, so a waiter that went to it out of turn (its predecessor left,
     * not granted) is told the lock is busy and looks again. Not now: no bell to wait on, as many waiters of this
     * client as the pool spares wait already, nobody keeps the bell of the waiter ahead, or the holder keeps none:
     * the core parks until the line-paced poll.
     */
    BlockingWait.Outcome awaitBell(AcquireRequest request, Duration slice) {
        BellWait wait = bellFor.remove(request);
        if (wait == null || closed) {
            return NO_BELL_TO_WAIT_ON;
        }
        long timeout = Math.min(slice.toNanos(), wait.endsNanos() == Long.MAX_VALUE ? Long.MAX_VALUE
                : wait.endsNanos() - System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1));
        if (timeout <= 0) {
            return new BlockingWait.Outcome.Decided(wait.busy()); // the holder's lease has ended: look again now
        }
        if (!bellWaits.tryAcquire()) {
            return OTHERS_WAIT;
        }
        String name = request.name();
        long sliceEnds = System.nanoTime() + timeout;
        try {
            return run("waiting for a bell in the line of '" + name + "'", c -> {
                LineBells.Rang rang = awaitOrDiscard(c, wait.bell(), timeout);
                if (rang == LineBells.Rang.NO_BELL && !wait.holders()) {
                    return NOBODY_KEEPS_IT;
                }
                if (rang == LineBells.Rang.STILL_HELD && System.nanoTime() < sliceEnds - timeout / 2) {
                    return CUT_SHORT; // not waited out (the server cut it short): no loop of looks and waits
                }
                if (rang == LineBells.Rang.RUNG && !wait.holders()) {
                    long left = sliceEnds - System.nanoTime();
                    rang = left <= 0 ? LineBells.Rang.STILL_HELD : awaitOrDiscard(c, bells.holderBell(name), left);
                }
                if (rang == LineBells.Rang.STILL_HELD) {
                    return new BlockingWait.Outcome.Decided(wait.busy()); // look again now
                }
                Long keepsNone = holderKeepsNoBell.get(request);
                if (rang == LineBells.Rang.NO_BELL && wait.holders() && keepsNone != null
                        && keepsNone == wait.busy().token()) {
                    return HOLDER_KEEPS_NONE; // found so before, for this very grant: no grant statement again
                }
                // the holder let go (or its session ended), or keeps no bell: the grant, which checks the row and the
                // line
                AcquireResult result = table.tryAcquire(c, name, request.owner(), request.leaseTime().toMillis(),
                        true);
                if (result instanceof AcquireResult.Granted granted) {
                    return new BlockingWait.Outcome.Decided(granted(request, granted));
                }
                LeaseTable.refuseSessionMarker(result, name, table.table);
                contended(name);
                if (rang == LineBells.Rang.NO_BELL && result instanceof AcquireResult.Busy busy
                        && busy.holder() != null && busy.remaining() != null && !busy.remaining().isZero()
                        && busy.token() == wait.busy().token()) {
                    holderKeepsNoBell.put(request, busy.token());
                    return HOLDER_KEEPS_NONE; // the holder waited on holds the lock and keeps no bell: poll
                }
                return new BlockingWait.Outcome.Decided(result);
            });
        } finally {
            bellWaits.release();
        }
    }

    /**
     * {@link LineBells#await}; a wait that failed may have left the bell taken on {@code c} (cut off between its
     * {@code GET_LOCK} and its {@code RELEASE_LOCK}), so the connection is discarded, never given back to the pool.
     */
    private LineBells.Rang awaitOrDiscard(java.sql.Connection c, String bell, long timeoutNanos) throws SQLException {
        try {
            return bells.await(c, bell, timeoutNanos);
        } catch (SQLException | RuntimeException e) {
            ConnectionSupport.discard(dataSource, c, "a wait for a bell failed: " + e.getMessage());
            throw e;
        }
    }

    private static final BlockingWait.Outcome CUT_SHORT = new BlockingWait.Outcome.NotNow(
            "the wait for a bell ended before its time: the line-paced poll");
    private static final BlockingWait.Outcome NO_BELL_TO_WAIT_ON = new BlockingWait.Outcome.NotNow(
            "no bell to wait on: the line-paced poll");
    private static final BlockingWait.Outcome OTHERS_WAIT = new BlockingWait.Outcome.NotNow(
            "as many waiters of this client as the pool spares wait on bells already: the line-paced poll");
    private static final BlockingWait.Outcome NOBODY_KEEPS_IT = new BlockingWait.Outcome.NotNow(
            "nobody keeps the bell of the waiter ahead: the line-paced poll");
    private static final BlockingWait.Outcome HOLDER_KEEPS_NONE = new BlockingWait.Outcome.NotNow(
            "the holder keeps no bell (its grant was uncontended, or its bell is not armed yet): the line-paced poll");

    /**
     * {@code busy}, unless this attempt has just taken a new place in line on a server that wakes waiters by
     * notification: a release that came between this attempt's look and its ticket may have named nobody (a release
     * with an empty line sends no notice), so the waiter looks once more now that it is in line, and takes a lock it
     * finds free with nobody ahead. (A release whose statement read the line just before the ticket committed and
     * committed itself after this look still names nobody: that waiter then looks at its first backoff poll, after
     * {@code minPollInterval} at most, since a new place is taken at the first attempt.)
     */
    private AcquireResult afterNewPlace(java.sql.Connection c, AcquireRequest request, boolean newPlace,
                                        AcquireResult.Busy busy) throws SQLException {
        if (!newPlace || pgListener == null) {
            return busy;
        }
        LeaseTable.Look again = table.look(c, request.name(), request.owner());
        if (again.holder() != null || again.ahead() > 0) {
            return busy;
        }
        AcquireResult result = table.tryAcquire(c, request.name(), request.owner(), request.leaseTime().toMillis(),
                true);
        if (result instanceof AcquireResult.Granted granted) {
            return granted(request, granted);
        }
        return busy; // taken by someone else in between: the notice of its release will name the line's head
    }

    /** The least and the greatest pause between the attempts of a waiter in a line that no notification wakes. */
    private static final long POLL_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * {@code busy}, with a hint for the next try when no {@code NOTIFY} will wake this waiter (MariaDB, MySQL,
     * SQLite, PostgreSQL without a listener), paced by the line: the waiter estimates one hand-over's time from how
     * fast its place moved up since it took it (or, before it moved, from a tenth of its wait so far), and looks
     * again after half the time it expects to wait: half a hand-over for the head, {@code k}/2 hand-overs with
     * {@code k} ahead; 1 to 100 ms. So the head takes a free lock within about half a hand-over, and each waiter
     * looks a few times before its turn whatever its place, rather than everyone backing off to the poll cap.
     */
    private AcquireResult.Busy inLine(AcquireRequest request, LeaseTable.Look look, AcquireResult.Busy busy) {
        Place place = places.get(request);
        if (place == null || pgListener != null) {
            return busy;
        }
        if (look.ahead() == UNKNOWN_AHEAD) {
            // an attempt that went straight to the grant: it does not know its place yet; look again soon
            return new AcquireResult.Busy(busy.holder(), busy.token(), busy.remaining(), Duration.ofNanos(POLL_MIN_NANOS));
        }
        if (place.firstAhead() == UNKNOWN_AHEAD) {
            // the first look since the place was taken: its pace is measured from here
            place = new Place(place.since(), look.ahead(), place.bell(), place.lost());
            places.replace(request, place);
        }
        long now = System.nanoTime();
        long waited = now - place.since();
        int moved = place.firstAhead() - look.ahead();
        long handOver = moved > 0 ? waited / moved : waited / 10;
        long poll = Math.max(POLL_MIN_NANOS, Math.min(POLL_MAX_NANOS, handOver * Math.max(1, look.ahead()) / 2));
        return new AcquireResult.Busy(busy.holder(), busy.token(), busy.remaining(), Duration.ofNanos(poll));
    }

    /** How many are ahead of a waiter whose attempt went straight to the grant, without a look. */
    private static final int UNKNOWN_AHEAD = -1;

    /** A busy answer for a lock that is free but kept for a waiter ahead in line: the core parks on its backoff. */
    private static final AcquireResult.Busy LINE_AHEAD = new AcquireResult.Busy(null, -1, null);

    /**
     * A place in line kept by this backend: the {@link System#nanoTime()} at which it was taken, how many were ahead
     * of it when it was taken, the bell this client keeps for it (MariaDB), or null, and whether the heartbeat found
     * its ticket gone (deleted after it expired, or a MariaDB restart emptied the line): the waiter's next attempt
     * takes a new place.
     */
    private record Place(long since, int firstAhead, String bell, boolean lost) {
    }

    /**
     * The places in line this backend keeps, by request (the core passes the same request to every attempt of one
     * acquisition).
     */
    private final ConcurrentHashMap<AcquireRequest, Place> places = new ConcurrentHashMap<>();
    /** Set first thing by {@link #close()}: no place is taken from then on. */
    private volatile boolean closed;

    /**
     * How long a place in line lives after its last heartbeat, by the database clock, whatever the waiter's lease: so
     * a waiter that died keeps a free lock from the next live waiter for at most this long (plus, on PostgreSQL, one
     * {@link #HEARTBEAT} of the waiter behind, whose heartbeat finds its turn). Five heartbeats: a live waiter keeps
     * its place through four heartbeats missed in a row (800 ms of a stalled JVM or a slow statement on a loaded
     * machine), and a heartbeat later than that still finds its ticket, in its place, unless the ticket was deleted
     * after {@link #DEAD_TICKET_GRACE}.
     */
    public static final Duration PLACE_TTL = Duration.ofSeconds(1);
    /**
     * How often a client that has places in line refreshes them all, in one statement ({@link LeaseTable#refreshPlaces}):
     * 5 statements a second per waiting client, whatever its number of waiters; none while nobody of it waits.
     */
    public static final Duration HEARTBEAT = Duration.ofMillis(200);
    /** How long a ticket stays after it expired before a waiting client's heartbeat deletes it. */
    static final Duration DEAD_TICKET_GRACE = Duration.ofSeconds(10);
    /** How often a waiting client's heartbeat deletes the line's dead tickets (of every lock). */
    private static final long CLEANUP_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** The heartbeat's thread, started with the first place in line; null until then. */
    private java.util.concurrent.ScheduledExecutorService heartbeats;
    /** When ({@link System#nanoTime()}) the heartbeat last deleted dead tickets. */
    private long lastCleanup = System.nanoTime() - CLEANUP_NANOS;
    /** Until when ({@link System#nanoTime()}) new waiters wait without a place, the line having been found full. */
    private volatile long lineFullUntil = System.nanoTime();
    /** Whether a full line has been logged (once per client). */
    private volatile boolean warnedLineFull;
    private static final long LINE_FULL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Starts the heartbeat of this client's places in line, once. */
    private synchronized void startHeartbeat() {
        if (heartbeats != null || closed) {
            return;
        }
        heartbeats = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "baton-line-heartbeat");
            t.setDaemon(true);
            return t;
        });
        long every = HEARTBEAT.toNanos();
        heartbeats.scheduleWithFixedDelay(this::heartbeat, every, every, TimeUnit.NANOSECONDS);
    }

    /**
     * One heartbeat: refreshes every place in line this client keeps, in one statement (more only past
     * {@link LeaseTable#renewBatch} places); a place whose ticket is gone is marked lost (its waiter's next attempt
     * takes a new one; on PostgreSQL it is woken for that); on PostgreSQL, a waiter whose turn it is (the lock is
     * free, nobody live ahead: the release's notice named a waiter that died) is woken to take it. Every
     * {@code CLEANUP_NANOS}, also deletes the tickets of every lock that expired more than {@link #DEAD_TICKET_GRACE}
     * ago. A failure is logged and tried again at the next heartbeat.
     */
    void heartbeat() {
        if (places.isEmpty() || closed) {
            return;
        }
        Map<LeaseTable.Ticket, AcquireRequest> byTicket = new HashMap<>();
        for (AcquireRequest request : places.keySet()) {
            byTicket.put(new LeaseTable.Ticket(request.name(), request.owner()), request);
        }
        ReleaseListener wake = coreListener;
        boolean cleanup = System.nanoTime() - lastCleanup >= CLEANUP_NANOS;
        try {
            LeaseTable.Heartbeat beat = run("heartbeat of " + byTicket.size() + " place(s) in line", c -> {
                LeaseTable.Heartbeat b = table.refreshPlaces(c, List.copyOf(byTicket.keySet()), PLACE_TTL.toMillis(),
                        wake != null);
                if (cleanup) {
                    table.deleteDeadTickets(c, DEAD_TICKET_GRACE.toMillis());
                }
                return b;
            });
            if (cleanup) {
                lastCleanup = System.nanoTime();
            }
            byTicket.forEach((ticket, request) -> {
                if (!beat.refreshed().contains(ticket)) {
                    Place lost = places.computeIfPresent(request,
                            (r, p) -> new Place(p.since(), p.firstAhead(), p.bell(), true));
                    if (lost != null && wake != null) {
                        wake.released(ticket.name(), ticket.owner()); // to take a new place now
                    }
                }
            });
            for (LeaseTable.Ticket turn : beat.turns()) {
                if (wake != null && places.containsKey(byTicket.get(turn))) {
                    named(turn.name(), turn.owner());
                    wake.released(turn.name(), turn.owner());
                }
            }
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(JdbcLeaseBackend.class).debug("{}: the heartbeat of the places in line"
                    + " failed; trying again in {} ms", description, HEARTBEAT.toMillis(), e);
        }
    }

    /**
     * A waiting request takes its place in line (a ticket that lives {@link #PLACE_TTL}, refreshed by the client's
     * heartbeat while the place is kept), once per acquisition, or again if the heartbeat found its ticket gone. A
     * try-once never takes a place. A line that is full (MariaDB's MEMORY table) is cleaned of every expired ticket
     * and tried again; still full, the waiter waits without a place, polling (one WARN per client), and new waiters
     * do so for a second without trying. Returns whether it took a new place.
     */
    private boolean keepPlace(java.sql.Connection c, AcquireRequest request, boolean waits, int ahead)
            throws SQLException {
        if (!waits) {
            return false;
        }
        long now = System.nanoTime();
        Place last = places.get(request);
        if (last != null && !last.lost()) {
            return false;
        }
        if (closed || (last == null && now - lineFullUntil < 0)) {
            return false; // closing: the core ends this attempt; a full line: waits without a place
        }
        String oldBell = last != null ? last.bell() : null;
        String bell = oldBell;
        long placeSince;
        try {
            placeSince = enqueue(c, request);
        } catch (SQLException e) {
            if (!table.isLineFull(e)) {
                throw e;
            }
            table.deleteDeadTickets(c, 0); // every expired ticket: dead waiters' places
            try {
                placeSince = enqueue(c, request);
            } catch (SQLException again) {
                if (!table.isLineFull(again)) {
                    throw again;
                }
                lineFull(again);
                if (last != null) {
                    places.remove(request);
                    if (oldBell != null) {
                        bells.letGo(oldBell, 0);
                    }
                }
                return false;
            }
        }
        if (bells != null) {
            // the place's bell for the waiter behind is named by when the place was taken; a place taken again (its
            // ticket found gone) is a new place, with a new bell
            bell = bells.ticketBell(request.name(), request.owner(), placeSince);
        }
        places.put(request, last != null ? new Place(last.since(), last.firstAhead(), bell, false)
                : new Place(now, ahead, bell, false));
        if (closed) {
            // close() may have taken its snapshot of the places before this one: leave no ticket behind
            places.remove(request);
            table.withdraw(c, request.name(), request.owner());
            return false;
        }
        startHeartbeat();
        if (bell != null && !bell.equals(oldBell)) {
            if (oldBell != null) {
                bells.letGo(oldBell, 0);
            }
            bells.arm(bell, 0); // for the waiter behind
        }
        return true;
    }

    /** Takes the request's place (a ticket living {@link #PLACE_TTL}); where bells ring, returns when it was taken. */
    private long enqueue(java.sql.Connection c, AcquireRequest request) throws SQLException {
        if (bells != null) {
            return table.enqueueTellingPlace(c, request.name(), request.owner(), PLACE_TTL.toMillis());
        }
        table.enqueue(c, request.name(), request.owner(), PLACE_TTL.toMillis());
        return 0;
    }

    /** The line was full even after its dead tickets were deleted: waiters wait without a place for a while. */
    private void lineFull(SQLException e) {
        lineFullUntil = System.nanoTime() + LINE_FULL_NANOS;
        if (!warnedLineFull) {
            warnedLineFull = true;
            org.slf4j.LoggerFactory.getLogger(JdbcLeaseBackend.class).warn("{}: {}", description, e.getMessage());
        }
    }

    /**
     * A waiter's place in line is withdrawn when it stops waiting: an exclusive waiter's ticket, a waiting
     * writer's claim (which holds back new readers). Read requests keep nothing while they wait.
     */
    @Override
    public void withdraw(AcquireRequest request) {
        String name = request.name();
        String owner = request.owner();
        if (request.mode() == LockMode.EXCLUSIVE) {
            forgetNamed(request);
            bellFor.remove(request);
            holderKeepsNoBell.remove(request);
            Place place = places.remove(request);
            if (place != null) {
                try {
                    run("withdrawing the place in line of '" + name + "'", c -> {
                        table.withdraw(c, name, owner);
                        return null;
                    });
                } finally {
                    if (place.bell() != null) {
                        bells.letGo(place.bell(), 0); // wakes the waiter behind
                    }
                }
            }
        } else if (request.mode() == LockMode.WRITE) {
            run("withdrawing the writer's claim on '" + name + "'", c -> {
                rwTable.abandon(c, name, owner);
                return null;
            });
        }
    }

    @Override
    public boolean release(LeaseKey lease) {
        String what = "release of '" + lease.name() + "' (token " + lease.token() + ")";
        if (lease.mode() != LockMode.EXCLUSIVE) {
            String channel = table.releaseChannel();
            return run(what, c -> rwTable.release(c, lease, channel), true);
        }
        try {
            return run(what, c -> table.release(c, lease), true);
        } finally {
            letGoHoldersBell(lease.name(), lease.token()); // after the row is free (or the release failed: no matter)
        }
    }

    /**
     * One read: the row matches name, owner and token and is held: not expired by the database clock (and, on
     * MariaDB, not released).
     */
    @Override
    public boolean confirm(LeaseKey lease) {
        String what = "confirming '" + lease.name() + "' (token " + lease.token() + ")";
        if (lease.mode() != LockMode.EXCLUSIVE) {
            return run(what, c -> rwTable.isHeld(c, lease), true);
        }
        boolean held = run(what, c -> {
            AcquireResult.Busy holder = table.peek(c, lease.name());
            return holder != null && lease.owner().equals(holder.holder()) && holder.token() == lease.token();
        }, true);
        if (!held) {
            letGoHoldersBell(lease.name(), lease.token()); // lost: no release will let its bell go
        }
        return held;
    }

    /**
     * Renews plain leases in one statement on the lease table and read-write holds in one on the
     * read-write table (more only past {@link LeaseTable#renewBatch} keys), over one connection.
     */
    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        return renew(leases, leaseTime, false).keySet();
    }

    /**
     * As {@link #renew}, with each plain lease's time left on its row before the renewal, by the database clock
     * (MariaDB, MySQL and SQLite: one {@code SELECT} more per renewal). Read-write holds are renewed but not measured:
     * they map to the lease time (nothing to report).
     */
    @Override
    public Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime) {
        return renew(leases, leaseTime, true);
    }

    private Map<LeaseKey, Duration> renew(Collection<LeaseKey> leases, Duration leaseTime, boolean timeLeft) {
        List<LeaseKey> plain = new ArrayList<>();
        List<LeaseKey> rw = new ArrayList<>();
        for (LeaseKey k : leases) {
            (k.mode() == LockMode.EXCLUSIVE ? plain : rw).add(k);
        }
        long millis = leaseTime.toMillis();
        int plainBatch = table.renewBatch();
        // the read-write table lists keys as OR terms in every dialect (3 parameters each)
        int rwBatch = Math.min(plainBatch, 1_000);
        Map<LeaseKey, Duration> result = run("renewal of " + leases.size() + " lease(s)", c -> {
            Map<LeaseKey, Duration> renewed = new HashMap<>();
            inBatches(plain, plainBatch, part -> {
                if (timeLeft) {
                    renewed.putAll(table.renewReportingTimeLeft(c, part, millis));
                } else {
                    table.renew(c, part, millis).forEach(k -> renewed.put(k, leaseTime));
                }
            });
            inBatches(rw, rwBatch, part -> rwTable.renew(c, part, millis).forEach(k -> renewed.put(k, leaseTime)));
            return renewed;
        }, true);
        for (LeaseKey k : plain) {
            if (!result.containsKey(k)) {
                letGoHoldersBell(k.name(), k.token()); // lost: no release will let its bell go
            }
        }
        return result;
    }

    private interface Batch {
        void accept(List<LeaseKey> part) throws SQLException;
    }

    /** Calls {@code batch} on consecutive slices of at most {@code size} keys. */
    private static void inBatches(List<LeaseKey> keys, int size, Batch batch) throws SQLException {
        for (int i = 0; i < keys.size(); i += size) {
            batch.accept(keys.subList(i, (int) Math.min(keys.size(), (long) i + size)));
        }
    }

    /**
     * Every lease row (but the session strategy's markers) with its lock's line, dead places included; then every
     * lock that has a line but no row (never granted, or purged), listed free with no grant: its line keeps it
     * for its head all the same.
     */
    @Override
    public List<LockInfo> inspect() {
        record Listing(List<LockInfo> rows, Map<String, List<LockInfo.Waiter>> lines) {
        }
        Listing listing = run("listing locks", c -> new Listing(table.inspect(c), table.lines(c)));
        Map<String, List<LockInfo.Waiter>> lines = new java.util.LinkedHashMap<>(listing.lines());
        List<LockInfo> out = new ArrayList<>();
        for (LockInfo row : listing.rows()) {
            // the session strategy's marker rows are claims on names, not leases: its own list shows its locks
            if (LeaseTable.SESSION_MARKER.equals(row.holder())) {
                continue;
            }
            List<LockInfo.Waiter> line = lines.remove(row.name());
            out.add(line == null ? row : new LockInfo(row.name(), row.holder(), row.fencingToken(), row.acquiredAt(),
                    row.expiresAt(), row.held(), line));
        }
        lines.forEach((name, line) -> out.add(new LockInfo(name, null, -1, null, null, false, line)));
        return out;
    }

    /**
     * An operator's removal of a place in line: deletes {@code owner}'s ticket for {@code name}. A live waiter
     * whose place is removed takes a new one at the back of the line at its next attempt; a dead one's place is
     * simply gone.
     */
    public Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
        return run("removal of " + owner + "'s place in the line of '" + name + "'",
                c -> table.removePlace(c, name, owner));
    }

    /**
     * Deletes rows expired more than {@code olderThan} ago, every expired ticket of the line (a waiter that died, or
     * whose withdrawal failed) and, on MariaDB, the entries of {@code <table>_released} that free nothing any more;
     * returns how many lease rows it deleted.
     */
    public int purge(Duration olderThan) {
        run("purge of expired tickets", table::purgeTickets);
        return run("purge of rows expired more than " + olderThan.toMillis() + " ms ago",
                c -> table.purge(c, olderThan.toMillis()));
    }

    /**
     * Reads the live grant of {@code name} and releases exactly that grant (owner and token), so a grant made
     * in between is never ended; if it changed in between, looks again (at most three times).
     */
    public Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        return run("force release of '" + name + "'", c -> {
            for (int attempt = 0; attempt < 3; attempt++) {
                AcquireResult.Busy live = table.peek(c, name);
                // a session strategy's claim is not a lease: releasing it would let both strategies hold the name
                LeaseTable.refuseSessionMarker(live, name, table.table);
                if (live == null || live.holder() == null
                        || (token.isPresent() && live.token() != token.getAsLong())) {
                    return Optional.empty();
                }
                if (table.forceRelease(c, new LeaseKey(name, live.holder(), live.token()))) {
                    letGoHoldersBell(name, live.token()); // if this client held it
                    return Optional.of(new ForcedRelease(name, live.holder(), live.token(), live.remaining()));
                }
            }
            return Optional.empty();
        });
    }

    /** Withdraws every place in line still kept (the core leaves that to a closing client's backend). */
    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            if (heartbeats != null) {
                heartbeats.shutdownNow();
            }
        }
        holderKeepsNoBell.clear();
        try {
            for (AcquireRequest request : List.copyOf(places.keySet())) {
                places.remove(request);
                try {
                    run("withdrawing the place in line of '" + request.name() + "' on close", c -> {
                        table.withdraw(c, request.name(), request.owner());
                        return null;
                    });
                } catch (LockBackendException e) {
                    // it ends on the server a place's time to live after its last heartbeat
                }
            }
        } finally {
            bellFor.clear();
            if (bells != null) {
                bells.close(); // lets every bell go: the places' too
            }
            if (pgListener != null) {
                pgListener.close();
            }
        }
    }
}
