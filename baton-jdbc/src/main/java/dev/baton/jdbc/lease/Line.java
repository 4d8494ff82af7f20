package dev.baton.jdbc.lease;

import dev.baton.LockBackendException;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static dev.baton.jdbc.lease.JdbcLeaseBackend.HEARTBEAT;
import static dev.baton.jdbc.lease.JdbcLeaseBackend.PLACE_TTL;

/**
 * The places in line that one lease backend keeps for its waiting requests: taking a place (a ticket in
 * {@code <table>_queue} that lives {@link JdbcLeaseBackend#PLACE_TTL}), the client's heartbeat that keeps them all
 * alive in one statement, and the line-paced poll of a waiter that no notice wakes.
 */
final class Line {
    /** How many are ahead of a waiter whose attempt went straight to the grant, without a look. */
    static final int UNKNOWN_AHEAD = -1;

    /** How long a ticket stays after it expired before a waiting client's heartbeat deletes it. */
    static final Duration DEAD_TICKET_GRACE = Duration.ofSeconds(10);
    /** How often a waiting client's heartbeat deletes the line's dead tickets (of every lock). */
    private static final long CLEANUP_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long LINE_FULL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** The least and the greatest pause between the attempts of a waiter in a line that no notification wakes. */
    private static final long POLL_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * A place in line kept by this backend: the {@link System#nanoTime()} at which it was taken, how many were ahead
     * of it when it was taken, the bell this client keeps for it (MariaDB), or null, and whether the heartbeat found
     * its ticket gone (deleted after it expired, or a MariaDB restart emptied the line): the waiter's next attempt
     * takes a new place.
     */
    record Place(long since, int firstAhead, String bell, boolean lost) {
    }

    private final JdbcLeaseBackend backend;
    private final LeaseTable table;

    /**
     * The places in line this backend keeps, by request (the core passes the same request to every attempt of one
     * acquisition).
     */
    private final ConcurrentHashMap<AcquireRequest, Place> places = new ConcurrentHashMap<>();
    /** Set first thing by {@link JdbcLeaseBackend#close()}: no place is taken from then on. */
    private volatile boolean closed;
    /** The heartbeat's thread, started with the first place in line; null until then. */
    private ScheduledExecutorService heartbeats;
    /** When ({@link System#nanoTime()}) the heartbeat last deleted dead tickets. */
    private long lastCleanup = System.nanoTime() - CLEANUP_NANOS;
    /** Until when ({@link System#nanoTime()}) new waiters wait without a place, the line having been found full. */
    private volatile long lineFullUntil = System.nanoTime();
    /** Whether a full line has been logged (once per client). */
    private volatile boolean warnedLineFull;

    Line(JdbcLeaseBackend backend, LeaseTable table) {
        this.backend = backend;
        this.table = table;
    }

    boolean has(AcquireRequest request) {
        return places.containsKey(request);
    }

    /** Ends the request's place in this client's books (its ticket is the caller's to delete); returns it, or null. */
    Place remove(AcquireRequest request) {
        return places.remove(request);
    }

    private List<AcquireRequest> requests() {
        return List.copyOf(places.keySet());
    }

    boolean closed() {
        return closed;
    }

    /**
     * A waiter that stops without a grant withdraws its place: its ticket is deleted, and what this client kept for
     * it let go ({@link WakeUps#placeGone}), which wakes the waiter behind.
     */
    void withdraw(AcquireRequest request) {
        Place place = places.remove(request);
        if (place != null) {
            try {
                backend.calls().run("withdrawing the place in line of '" + request.name() + "'", c -> {
                    table.withdraw(c, request.name(), request.owner());
                    return null;
                });
            } finally {
                backend.wakeUps().placeGone(place.bell()); // wakes the waiter behind
            }
        }
    }

    /**
     * A closing client withdraws every place still kept, its ticket deleted (if that fails, the ticket ends on the
     * server {@link JdbcLeaseBackend#PLACE_TTL} after its last heartbeat). Called after {@link #close}.
     */
    void withdrawAll() {
        for (AcquireRequest request : requests()) {
            places.remove(request);
            try {
                backend.calls().run("withdrawing the place in line of '" + request.name() + "' on close", c -> {
                    table.withdraw(c, request.name(), request.owner());
                    return null;
                });
            } catch (LockBackendException e) {
                // it ends on the server a place's time to live after its last heartbeat
            }
        }
    }

    /** No place is taken from now on, and the heartbeat stops. */
    void close() {
        closed = true;
        synchronized (this) {
            if (heartbeats != null) {
                heartbeats.shutdownNow();
            }
        }
    }

    /** Starts the heartbeat of this client's places in line, once. */
    private synchronized void startHeartbeat() {
        if (heartbeats != null || closed) {
            return;
        }
        heartbeats = Executors.newSingleThreadScheduledExecutor(r -> {
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
        WakeUps wake = backend.wakeUps();
        boolean turns = wake.heartbeatFindsTurns();
        boolean cleanup = System.nanoTime() - lastCleanup >= CLEANUP_NANOS;
        try {
            LeaseTable.Heartbeat beat = backend.calls().run("heartbeat of " + byTicket.size() + " place(s) in line", c -> {
                LeaseTable.Heartbeat b = table.refreshPlaces(c, List.copyOf(byTicket.keySet()), PLACE_TTL.toMillis(),
                        turns);
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
                    if (lost != null && turns) {
                        wake.placeLost(ticket); // to take a new place now
                    }
                }
            });
            for (LeaseTable.Ticket turn : beat.turns()) {
                if (turns && places.containsKey(byTicket.get(turn))) {
                    wake.turn(turn);
                }
            }
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(JdbcLeaseBackend.class).debug("{}: the heartbeat of the places in line"
                    + " failed; trying again in {} ms", backend.description(), HEARTBEAT.toMillis(), e);
        }
    }

    /**
     * A waiting request takes its place in line (a ticket that lives {@link JdbcLeaseBackend#PLACE_TTL}, refreshed by
     * the client's heartbeat while the place is kept), once per acquisition, or again if the heartbeat found its
     * ticket gone. A try-once never takes a place. A line that is full (MariaDB's MEMORY table) is cleaned of every
     * expired ticket and tried again; still full, the waiter waits without a place, polling (one WARN per client),
     * and new waiters do so for a second without trying. Returns whether it took a new place.
     */
    boolean keepPlace(Connection c, AcquireRequest request, boolean waits, int ahead) throws SQLException {
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
        WakeUps wake = backend.wakeUps();
        String oldBell = last != null ? last.bell() : null;
        long placeSince;
        try {
            placeSince = wake.enqueue(c, request);
        } catch (SQLException e) {
            if (!table.isLineFull(e)) {
                throw e;
            }
            table.deleteDeadTickets(c, 0); // every expired ticket: dead waiters' places
            try {
                placeSince = wake.enqueue(c, request);
            } catch (SQLException again) {
                if (!table.isLineFull(again)) {
                    throw again;
                }
                lineFull(again);
                if (last != null) {
                    places.remove(request);
                    wake.placeGone(oldBell);
                }
                return false;
            }
        }
        String bell = wake.placeBell(request, placeSince, oldBell);
        places.put(request, last != null ? new Place(last.since(), last.firstAhead(), bell, false)
                : new Place(now, ahead, bell, false));
        if (closed) {
            // close() may have taken its snapshot of the places before this one: leave no ticket behind
            places.remove(request);
            table.withdraw(c, request.name(), request.owner());
            return false;
        }
        startHeartbeat();
        wake.placeMoved(oldBell, bell);
        return true;
    }

    /** The line was full even after its dead tickets were deleted: waiters wait without a place for a while. */
    private void lineFull(SQLException e) {
        lineFullUntil = System.nanoTime() + LINE_FULL_NANOS;
        if (!warnedLineFull) {
            warnedLineFull = true;
            org.slf4j.LoggerFactory.getLogger(JdbcLeaseBackend.class).warn("{}: {}", backend.description(),
                    e.getMessage());
        }
    }

    /**
     * {@code busy}, with a hint for the next try when no {@code NOTIFY} will wake this waiter (MariaDB, MySQL,
     * SQLite, PostgreSQL without a listener), paced by the line: the waiter estimates one hand-over's time from how
     * fast its place moved up since it took it (or, before it moved, from a tenth of its wait so far), and looks
     * again after half the time it expects to wait: half a hand-over for the head, {@code k}/2 hand-overs with
     * {@code k} ahead; 1 to 100 ms. So the head takes a free lock within about half a hand-over, and each waiter
     * looks a few times before its turn whatever its place, rather than everyone backing off to the poll cap.
     */
    AcquireResult.Busy paced(AcquireRequest request, LeaseTable.Look look, AcquireResult.Busy busy) {
        Place place = places.get(request);
        if (place == null || !backend.wakeUps().pacedByLine()) {
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
}
