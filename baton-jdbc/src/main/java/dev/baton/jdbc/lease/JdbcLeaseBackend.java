package dev.baton.jdbc.lease;

import dev.baton.ForcedRelease;
import dev.baton.LockInfo;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.readwrite.ReadWriteTable;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.ClearsLostGrants;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsTimeLeft;
import dev.baton.spi.WaitingQueue;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

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
 *       how fast its place in line moves. Which of the three a client uses is chosen once, by {@link #create}: a
 *       {@link WakeUps} ({@link NoticeWakeUps}, {@link BellWakeUps}, {@link PolledWakeUps}); the places in line and
 *       their heartbeat are kept by {@link Line}.</li>
 *   <li>Renew: extend every live row whose name, owner and token match, in as few statements as the dialect
 *       allows ({@link LeaseTable#renewBatch}); the rows not extended are lost.</li>
 *   <li>Release: free the row where name, owner and token match ({@code expires_at} no later than now; MariaDB:
 *       an entry naming the grant in the MEMORY table {@code <table>_released}, no write of the row);
 *       PostgreSQL announces it on the table's {@code NOTIFY} channel in the same statement, and
 *       {@link PgReleaseListener} wakes the waiters of other clients.</li>
 *   <li>Clear a lost grant: a grant the core declared lost ({@link ClearsLostGrants#lost}: its renewal found less
 *       time left on the row than the client counted on, so the server's clock stepped forward, or its deadline
 *       passed) is released at once, in the background, by the same owner- and token-checked statement as a
 *       release, which wakes the waiters the same way; the renewal that found it short had extended the row for a
 *       whole lease, held by nobody. A row taken over by another grant (another owner or token) is left alone.</li>
 *   <li>Confirm: one read, the row matches name, owner and token and has not expired.</li>
 *   <li>Read and write modes run on {@code <table>_rw} ({@link ReadWriteTable}).</li>
 *   <li>Idempotent calls (renew, release, confirm) are made again at once if the pool handed out a dead
 *       connection, or (a few times) if a REPEATABLE READ pool default made a statement fail with 40001.</li>
 * </ol>
 * The SQL of each dialect is in its {@link LeaseTable}: {@link PostgresLeaseTable}, {@link MariaDbLeaseTable},
 * {@link MySqlLeaseTable} (both on {@link MySqlFamilyLeaseTable}), {@link SqliteLeaseTable}. Each call borrows its
 * connection through {@link AutoCommittedCalls}; the renewal's batches are {@link BatchedRenewal}'s, lost grants are
 * cleared by {@link LostGrantClearing}, and the operator's calls (list, remove from a line, purge, force-release) are
 * {@link OperatorTools}'.
 *
 * <p>A driver error becomes a {@link LockBackendException} naming the backend and operation.
 * Connections that failed mid-statement are closed by the pool (HikariCP evicts on SQL state class 08 and
 * on socket timeouts), never reused by Baton itself: it keeps no connection between calls, except the
 * PostgreSQL listener's own and, on MariaDB under contention, the one that keeps the client's bells.
 */
public class JdbcLeaseBackend implements WaitingQueue, ReadWriteModes, ConfirmsGrants, ReportsTimeLeft,
        ClearsLostGrants {
    private final DataSource dataSource;
    private final LeaseTable table;
    private final ReadWriteTable rwTable;
    private final String description;
    /** Each call on a connection borrowed for it, in auto-commit mode. */
    private final AutoCommittedCalls calls;
    /** The places in line this client keeps for its waiters, and their heartbeat. */
    private final Line line;
    /** Names this client found contended lately: a first attempt at one looks before it writes. */
    private final Contention contention = new Contention();
    /** How this client's waiters are woken: chosen once, by {@link #create}. */
    private final WakeUps wakeUps;
    /** Renews this client's grants in as few statements as the dialect allows. */
    private final BatchedRenewal renewal;
    /** Listing, removal from a line, purge and forced release, for operators. */
    private final OperatorTools operator;
    /** Where lost grants are cleared ({@link #lost}), in the background. */
    private final LostGrantClearing clearing = new LostGrantClearing(this::release);

    /** @param wakeUps makes the backend's wake-up mechanism, given the backend */
    private JdbcLeaseBackend(DataSource dataSource, LeaseTable table, boolean direct,
                             java.util.function.Function<JdbcLeaseBackend, WakeUps> wakeUps) {
        this.dataSource = dataSource;
        this.table = table;
        this.rwTable = ReadWriteTable.of(table.dialect(), table.table);
        this.description = "jdbc-lease/" + table.dialect().id() + " (table " + table.table + ")";
        this.calls = new AutoCommittedCalls(dataSource, DialectTraits.of(table.dialect(), direct), description);
        this.line = new Line(this, table);
        this.wakeUps = wakeUps.apply(this);
        this.renewal = new BatchedRenewal(table, rwTable, calls, this.wakeUps);
        this.operator = new OperatorTools(table, calls, this.wakeUps);
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
     * The wake-up mechanism ({@link WakeUps}) is chosen here, once.
     */
    public static JdbcLeaseBackend create(DataSource dataSource, LeaseTable table, DataSource notifications,
                                          boolean direct, boolean mariaDbServer) {
        if (notifications != null && table.releaseChannel() != null) {
            return new Notifying(dataSource, table, notifications, direct);
        }
        int bellWaiters = mariaDbServer ? BellWakeUps.waiters(dataSource, table) : 0;
        return bellWaiters > 0 ? new Ringing(dataSource, table, direct, bellWaiters)
                : new JdbcLeaseBackend(dataSource, table, direct, b -> new PolledWakeUps(table));
    }

    /**
     * The least HikariCP pool that bells are used with: one connection keeps the client's bells, one waits on a
     * bell, and one is left for the statements.
     */
    public static final int BELL_POOL_SIZE = 3;

    /** The most waiters of one client that wait on bells at once (each on a connection of the pool). */
    public static final int BELL_WAITERS = 2;

    /**
     * The lease backend on MariaDB and MySQL: each waiter waits on the server for the bell of the one ahead of it
     * ({@link LineBells}) — the head for the holder's — instead of polling (as many at once as the pool spares; the
     * others poll, paced by the line). See {@link BellWakeUps}.
     */
    public static final class Ringing extends JdbcLeaseBackend implements BlockingWait {
        private Ringing(DataSource dataSource, LeaseTable table, boolean direct, int bellWaiters) {
            super(dataSource, table, direct, b -> new BellWakeUps(b, dataSource, table, bellWaiters));
        }

        @Override
        public Outcome awaitGrant(AcquireRequest request, Duration slice) {
            return wakeUps().awaitGrant(request, slice);
        }
    }

    /**
     * The lease backend on PostgreSQL with a listener connection: releases wake waiters in other clients. See
     * {@link NoticeWakeUps}.
     */
    public static final class Notifying extends JdbcLeaseBackend implements NotifiesReleases {
        private Notifying(DataSource dataSource, LeaseTable table, DataSource notifications, boolean direct) {
            super(dataSource, table, direct, b -> new NoticeWakeUps(b, table, notifications));
        }

        @Override
        public void listen(ReleaseListener listener) {
            wakeUps().listen(listener);
        }
    }

    /**
     * How long a place in line lives after its last heartbeat, by the database clock, whatever the waiter's lease: so
     * a waiter that died keeps a free lock from the next live waiter for at most this long (plus, on PostgreSQL, one
     * {@link #HEARTBEAT} of the waiter behind, whose heartbeat finds its turn). Five heartbeats: a live waiter keeps
     * its place through four heartbeats missed in a row (800 ms of a stalled JVM or a slow statement on a loaded
     * machine), and a heartbeat later than that still finds its ticket, in its place, unless the ticket was deleted
     * after {@link Line#DEAD_TICKET_GRACE}.
     */
    public static final Duration PLACE_TTL = Duration.ofSeconds(1);
    /**
     * How often a client that has places in line refreshes them all, in one statement ({@link LeaseTable#refreshPlaces}):
     * 5 statements a second per waiting client, whatever its number of waiters; none while nobody of it waits.
     */
    public static final Duration HEARTBEAT = Duration.ofMillis(200);

    /** The pool this backend borrows from, shared with the client's transaction strategies. */
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public String description() {
        return description;
    }

    WakeUps wakeUps() {
        return wakeUps;
    }

    Line line() {
        return line;
    }

    Contention contention() {
        return contention;
    }

    AutoCommittedCalls calls() {
        return calls;
    }

    @Override
    public void start(String clientId) {
        wakeUps.start(clientId);
    }

    /**
     * One attempt of an acquisition, in the order of the algorithm above: look (unless the lock is likely free),
     * take or keep a place in line, choose what to wait on; else the grant; a busy answer paced by the line.
     */
    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        String name = request.name();
        if (request.mode() != LockMode.EXCLUSIVE) {
            return calls.run(request.mode().name().toLowerCase() + " acquire of '" + name + "'",
                    c -> rwTable.tryAcquire(c, name, request.mode(), request.owner(), request.leaseTime().toMillis()));
        }
        String owner = request.owner();
        long leaseMillis = request.leaseTime().toMillis();
        boolean waits = request.patience() == AcquireRequest.Patience.WAIT;
        wakeUps.attemptStarts(request);
        return calls.run("acquire of '" + name + "'", c -> {
            // a waiter that a release notice named the head of the line grants itself at once, without a look
            if (!wakeUps.namedHead(request) && (line.has(request) || contention.recently(name))) {
                if (wakeUps.placeBeforeLook() && !line.has(request)) {
                    line.keepPlace(c, request, waits, Line.UNKNOWN_AHEAD);
                }
                LeaseTable.Look look = table.look(c, name, owner, wakeUps.looksForPredecessor());
                if (look.holder() != null) {
                    LeaseTable.refuseSessionMarker(look.holder(), name, table.table);
                    contention.found(name);
                    boolean newPlace = line.keepPlace(c, request, waits, look.ahead());
                    wakeUps.foundBusy(request, waits, look, look.holder(),
                            System.nanoTime() + look.holder().remaining().toNanos());
                    return wakeUps.afterNewPlace(c, request, newPlace, line.paced(request, look, look.holder()));
                }
                if (look.ahead() > 0) {
                    // free, but kept for the waiter ahead in line: no write for the row, a place in line for us
                    contention.found(name);
                    boolean newPlace = line.keepPlace(c, request, waits, look.ahead());
                    wakeUps.foundBusy(request, waits, look, LINE_AHEAD, Long.MAX_VALUE);
                    return wakeUps.afterNewPlace(c, request, newPlace, line.paced(request, look, LINE_AHEAD));
                }
            }
            // (uncontended as far as this client knows, the look is skipped: the grant itself takes the row only if
            // it is free and nobody else is in line, so the look would only cost a round trip)
            AcquireResult result = table.tryAcquire(c, name, owner, leaseMillis, line.has(request));
            if (result instanceof AcquireResult.Granted granted) {
                return granted(request, granted);
            }
            LeaseTable.refuseSessionMarker(result, name, table.table);
            contention.found(name);
            AcquireResult.Busy busy = (AcquireResult.Busy) result;
            // a free row that the line kept for another waiter has no holder and nothing left to run
            AcquireResult.Busy answer = busy.holder() == null || busy.remaining() == null || busy.remaining().isZero()
                    ? LINE_AHEAD : busy;
            boolean newPlace = line.keepPlace(c, request, waits, Line.UNKNOWN_AHEAD);
            return wakeUps.afterNewPlace(c, request, newPlace,
                    line.paced(request, new LeaseTable.Look(answer, Line.UNKNOWN_AHEAD), answer));
        });
    }

    /** A busy answer for a lock that is free but kept for a waiter ahead in line: the core parks on its backoff. */
    private static final AcquireResult.Busy LINE_AHEAD = new AcquireResult.Busy(null, -1, null);

    /** A grant ends the request's place in line (and, on MariaDB and MySQL, arms the holder's bell: {@link BellWakeUps}). */
    AcquireResult granted(AcquireRequest request, AcquireResult.Granted granted) {
        Line.Place place = line.remove(request);
        wakeUps.granted(request, place, granted.token());
        return granted;
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
            wakeUps.left(request);
            line.withdraw(request);
        } else if (request.mode() == LockMode.WRITE) {
            calls.run("withdrawing the writer's claim on '" + name + "'", c -> {
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
            return calls.run(what, c -> rwTable.release(c, lease, channel), true);
        }
        try {
            return calls.run(what, c -> table.release(c, lease), true);
        } finally {
            wakeUps.holdEnded(lease.name(), lease.token()); // after the row is free (or the release failed: no matter)
        }
    }

    /**
     * A grant the core declared lost (its renewal found less time left on the row than the client counted on, or its
     * deadline passed): the renewal that found it short extended the row for a whole lease, held by nobody. Released
     * in the background (this is called on the core's renewer or watchdog thread, which must not wait on the
     * database) by {@link #release}: one statement that ends the grant only where name, owner and token still match,
     * never a later holder's, and wakes the waiters as a release does (PostgreSQL: its {@code NOTIFY}; MariaDB: the
     * holder's bell and the table of releases). If the database cannot be reached, the row ends with its lease.
     */
    @Override
    public void lost(LeaseKey lease) {
        clearing.clear(lease);
    }

    /**
     * One read: the row matches name, owner and token and is held: not expired by the database clock (and, on
     * MariaDB, not released).
     */
    @Override
    public boolean confirm(LeaseKey lease) {
        String what = "confirming '" + lease.name() + "' (token " + lease.token() + ")";
        if (lease.mode() != LockMode.EXCLUSIVE) {
            return calls.run(what, c -> rwTable.isHeld(c, lease), true);
        }
        boolean held = calls.run(what, c -> {
            AcquireResult.Busy holder = table.peek(c, lease.name());
            return holder != null && lease.owner().equals(holder.holder()) && holder.token() == lease.token();
        }, true);
        if (!held) {
            wakeUps.holdEnded(lease.name(), lease.token()); // lost: no release will let its bell go
        }
        return held;
    }

    /**
     * Renews plain leases in one statement on the lease table and read-write holds in one on the
     * read-write table (more only past {@link LeaseTable#renewBatch} keys), over one connection.
     */
    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        return renewal.renew(leases, leaseTime, false).keySet();
    }

    /**
     * As {@link #renew}, with each plain lease's time left on its row before the renewal, by the database clock
     * (MariaDB, MySQL and SQLite: one {@code SELECT} more per renewal). Read-write holds are renewed but not measured:
     * they map to the lease time (nothing to report).
     */
    @Override
    public Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime) {
        return renewal.renew(leases, leaseTime, true);
    }

    /**
     * Every lease row (but the session strategy's markers) with its lock's line, dead places included; then every
     * lock that has a line but no row (never granted, or purged), listed free with no grant: its line keeps it
     * for its head all the same.
     */
    @Override
    public List<LockInfo> inspect() {
        return operator.inspect();
    }

    /**
     * An operator's removal of a place in line: deletes {@code owner}'s ticket for {@code name}. A live waiter
     * whose place is removed takes a new one at the back of the line at its next attempt; a dead one's place is
     * simply gone.
     */
    public Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
        return operator.removeFromLine(name, owner);
    }

    /**
     * Deletes rows expired more than {@code olderThan} ago, every expired ticket of the line (a waiter that died, or
     * whose withdrawal failed) and, on MariaDB, the entries of {@code <table>_released} that free nothing any more;
     * returns how many lease rows it deleted.
     */
    public int purge(Duration olderThan) {
        return operator.purge(olderThan);
    }

    /**
     * Reads the live grant of {@code name} and releases exactly that grant (owner and token), so a grant made
     * in between is never ended; if it changed in between, looks again (at most three times).
     */
    public Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        return operator.forceRelease(name, token);
    }

    /**
     * Withdraws every place in line still kept (the core leaves that to a closing client's backend). Lost grants
     * already being cleared are cleared (the pool permitting), in the background; none is taken on after.
     */
    @Override
    public void close() {
        clearing.shutdown();
        line.close();
        try {
            line.withdrawAll();
        } finally {
            wakeUps.close(); // MariaDB: lets every bell go, the places' too; PostgreSQL: stops listening
        }
    }
}
