package dev.baton.jdbc.lease;

import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.BlockingWait;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * MariaDB's bells ({@link LineBells}): each waiter waits on the server for the bell of the one ahead of it, the head
 * for the holder's, instead of polling (as many at once as the pool spares; the others poll, paced by the line).
 * The holder of a contended lock arms the lock's bell for the next head and lets it go when its hold ends; each
 * place in line keeps a bell for the waiter behind, let go when the place ends.
 */
final class BellWakeUps implements WakeUps {
    private final JdbcLeaseBackend backend;
    private final LeaseTable table;
    private final DataSource dataSource;
    /** The bells this client's holders and waiters keep for the waiters behind them. */
    private final LineBells bells;
    /** How many of this client's waiters may wait on a bell at once (each on a pooled connection). */
    private final Semaphore bellWaits;

    BellWakeUps(JdbcLeaseBackend backend, DataSource dataSource, LeaseTable table, int bellWaiters) {
        this.backend = backend;
        this.table = table;
        this.dataSource = dataSource;
        this.bells = new LineBells(dataSource, table.table, backend.description());
        this.bellWaits = new Semaphore(Math.max(0, bellWaiters));
    }

    /**
     * How many waiters of a client on MariaDB may wait on bells at once, each on a connection of the pool for up to
     * a slice: {@link JdbcLeaseBackend#BELL_WAITERS}, and with HikariCP no more than the pool's size less two — the
     * bell connection, and one always left for the statements, among them the releases that wake the waiters (none
     * below {@link JdbcLeaseBackend#BELL_POOL_SIZE}: then no bells, and waiters poll); 0 on other databases. So a
     * contended client borrows at most three connections beyond its statements' (the bell connection and two
     * waits); its other waiters poll.
     */
    static int waiters(DataSource dataSource, LeaseTable table) {
        if (table.dialect() != Dialect.MARIADB && table.dialect() != Dialect.MYSQL) {
            return 0;
        }
        OptionalInt size = ConnectionSupport.maximumPoolSize(dataSource);
        if (size.isEmpty()) {
            return JdbcLeaseBackend.BELL_WAITERS;
        }
        if (size.getAsInt() < JdbcLeaseBackend.BELL_POOL_SIZE) {
            org.slf4j.LoggerFactory.getLogger(JdbcLeaseBackend.class).info("table {}: the pool's maximumPoolSize is {},"
                    + " below the {} that waiting on bells needs; waiters poll, paced by their line", table.table,
                    size.getAsInt(), JdbcLeaseBackend.BELL_POOL_SIZE);
            return 0;
        }
        return Math.min(JdbcLeaseBackend.BELL_WAITERS, size.getAsInt() - 2);
    }

    /**
     * The bell each request of this client waits on next, as its last attempt found: the holder's bell for the head
     * of the line behind a live holder, else the ticket bell of the waiter right ahead. Set by an attempt, taken by
     * the wait that follows it.
     */
    private final ConcurrentHashMap<AcquireRequest, BellWait> bellFor = new ConcurrentHashMap<>();

    /**
     * Per waiting request, the token of the holder its wait found holding the lock and keeping no bell
     * ({@link #awaitGrant}): until that grant ends, the request's waits on the holder's bell poll without trying the
     * grant (three statements on MariaDB when the lock is held) each time.
     */
    private final ConcurrentHashMap<AcquireRequest, Long> holderKeepsNoBell = new ConcurrentHashMap<>();

    /**
     * A wait on {@code bell}: {@code holders} (the holder's bell: rung, the waiter grants itself) or the ticket bell of
     * the waiter right ahead (rung, that waiter has just been granted, so this one is now the head, or it left the
     * line; either way this one waits on the holder's bell next, and a grant out of turn is refused by the line;
     * {@link #awaitGrant}); {@code busy}: the answer
     * while it rings not; {@code endsNanos}: the {@link System#nanoTime()} after which waiting on it is pointless
     * (the holder's lease ends).
     */
    private record BellWait(String bell, boolean holders, AcquireResult.Busy busy,
                            long endsNanos) {
    }

    @Override
    public void close() {
        holderKeepsNoBell.clear();
        bellFor.clear();
        bells.close(); // lets every bell go: the places' too
    }

    @Override
    public void attemptStarts(AcquireRequest request) {
        bellFor.remove(request);
    }

    @Override
    public boolean looksForPredecessor() {
        return true;
    }

    /** After a look that found the lock held or kept: which bell the waiting request waits on next, if any. */
    @Override
    public void foundBusy(AcquireRequest request, boolean waits, LeaseTable.Look look, AcquireResult.Busy busy,
                          long endsNanos) {
        if (!waits || backend.line().closed()) {
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
     * The holder of a contended lock (its grantee waited in line, or this client found the name held lately) arms
     * the lock's bell for the next head; then the grantee's place lets its bell go.
     */
    @Override
    public void granted(AcquireRequest request, Line.Place place, long token) {
        holderKeepsNoBell.remove(request);
        if (place != null || backend.contention().recently(request.name())) {
            bells.arm(bells.holderBell(request.name()), token);
        }
        if (place != null && place.bell() != null) {
            bells.letGo(place.bell(), 0); // after the holder's bell: the waiter this wakes finds it armed
        }
    }

    @Override
    public void left(AcquireRequest request) {
        bellFor.remove(request);
        holderKeepsNoBell.remove(request);
    }

    /**
     * The holder's bell of {@code name}, if this client keeps it for the grant with {@code token}, is let go (the
     * lease was released, or found lost), which wakes the head of the line.
     */
    @Override
    public void holdEnded(String name, long token) {
        bells.letGo(bells.holderBell(name), token);
    }

    @Override
    public long enqueue(Connection c, AcquireRequest request) throws SQLException {
        return table.enqueueTellingPlace(c, request.name(), request.owner(), JdbcLeaseBackend.PLACE_TTL.toMillis());
    }

    /**
     * The place's bell for the waiter behind is named by when the place was taken; a place taken again (its ticket
     * found gone) is a new place, with a new bell.
     */
    @Override
    public String placeBell(AcquireRequest request, long placeSince, String oldBell) {
        return bells.ticketBell(request.name(), request.owner(), placeSince);
    }

    @Override
    public void placeMoved(String oldBell, String bell) {
        if (bell != null && !bell.equals(oldBell)) {
            if (oldBell != null) {
                bells.letGo(oldBell, 0);
            }
            bells.arm(bell, 0); // for the waiter behind
        }
    }

    @Override
    public void placeGone(String bell) {
        if (bell != null) {
            bells.letGo(bell, 0); // wakes the waiter behind
        }
    }

    /**
     * The wait of a waiter in line: on the bell its last attempt chose ({@link #foundBusy}), at most {@code slice}
     * (and, for the holder's bell, no longer than the holder's lease plus a millisecond).
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
    @Override
    public BlockingWait.Outcome awaitGrant(AcquireRequest request, Duration slice) {
        BellWait wait = bellFor.remove(request);
        if (wait == null || backend.line().closed()) {
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
            return backend.calls().run("waiting for a bell in the line of '" + name + "'", c -> {
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
                    return new BlockingWait.Outcome.Decided(backend.granted(request, granted));
                }
                LeaseTable.refuseSessionMarker(result, name, table.table);
                backend.contention().found(name);
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
    private LineBells.Rang awaitOrDiscard(Connection c, String bell, long timeoutNanos) throws SQLException {
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
}
