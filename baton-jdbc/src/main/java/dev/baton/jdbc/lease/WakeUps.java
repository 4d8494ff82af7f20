package dev.baton.jdbc.lease;

import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReleaseListener;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * How the waiters of one lease backend learn that their turn may have come: the one thing that differs between
 * the servers in the acquisition of a lease, chosen once when the backend is built (as Curator's
 * {@code LockInternalsDriver}). {@link JdbcLeaseBackend#tryAcquire} runs the same steps for all of them and asks
 * this at the few points where they differ.
 * <ul>
 *   <li>{@link PolledWakeUps}: nobody wakes a waiter; it looks again when the line-paced poll says (SQLite, MySQL,
 *       PostgreSQL without a listener, MariaDB with a pool too small for bells).</li>
 *   <li>{@link NoticeWakeUps}: PostgreSQL's {@code LISTEN}/{@code NOTIFY}; a release names the head of the line,
 *       whose next attempt goes straight to the grant.</li>
 *   <li>{@link BellWakeUps}: MariaDB's bells ({@link LineBells}); each waiter waits on the server for the bell of
 *       the one ahead of it, the head for the holder's.</li>
 * </ul>
 * The defaults are the polled ones: nothing to wake, nothing to forget. The backend that {@link JdbcLeaseBackend#create}
 * builds for a mechanism offers the core what the mechanism can do ({@link BlockingWait} for the bells,
 * {@link NotifiesReleases} for the notices) and hands those calls to it here, through this interface.
 */
interface WakeUps {

    /** The client starts (its id is how its requests' owners begin). */
    default void start(String clientId) {
    }

    /** The client closes: every resource of the mechanism is let go. */
    default void close() {
    }

    // --- what the core asks of a backend that offers it ---------------------------------------------------------

    /**
     * The core's listener of releases ({@link NotifiesReleases#listen}), given once before {@link #start}: only a
     * mechanism that hears releases of other clients keeps it.
     */
    default void listen(ReleaseListener listener) {
    }

    /**
     * A wait on the server for the lock, at most {@code slice} ({@link BlockingWait#awaitGrant}). Only the backend
     * built for a mechanism that can wait so (the bells) offers {@link BlockingWait} and calls this; for the others
     * a call would be a wiring mistake.
     */
    default BlockingWait.Outcome awaitGrant(AcquireRequest request, Duration slice) {
        throw new UnsupportedOperationException();
    }

    // --- one attempt -------------------------------------------------------------------------------------------

    /** An attempt of {@code request} begins: what the last attempt chose to wait on is forgotten. */
    default void attemptStarts(AcquireRequest request) {
    }

    /**
     * Whether a notice named this waiter the head of its line lately (and forgets it): its attempt then goes
     * straight to the grant, without a look.
     */
    default boolean namedHead(AcquireRequest request) {
        return false;
    }

    /** Whether a waiter takes its place in line before its look (so a release after its ticket names it). */
    default boolean placeBeforeLook() {
        return false;
    }

    /** Whether the look also names the waiter right ahead of the caller ({@link LeaseTable#look}). */
    default boolean looksForPredecessor() {
        return false;
    }

    /**
     * After a look that found the lock held ({@code busy}, its lease ending at {@code endsNanos}) or kept for a
     * waiter ahead: what a waiting request waits on next, if anything.
     */
    default void foundBusy(AcquireRequest request, boolean waits, LeaseTable.Look look, AcquireResult.Busy busy,
                           long endsNanos) {
    }

    /**
     * The answer of an attempt that found the lock busy: {@code busy}, unless a waiter that has just taken a new
     * place ({@code newPlace}) must look once more.
     */
    default AcquireResult afterNewPlace(Connection c, AcquireRequest request, boolean newPlace,
                                        AcquireResult.Busy busy) throws SQLException {
        return busy;
    }

    /** Whether a waiter is told when to look again by the line-paced poll ({@link Line#paced}); else a notice wakes it. */
    default boolean pacedByLine() {
        return true;
    }

    /** {@code request} was granted the lease with {@code token}; {@code place} is the place it had in line, or null. */
    default void granted(AcquireRequest request, Line.Place place, long token) {
    }

    /** {@code request} stopped waiting without a grant. */
    default void left(AcquireRequest request) {
    }

    /** This client's hold of {@code name} with {@code token} ended: released, found lost, or force-released. */
    default void holdEnded(String name, long token) {
    }

    // --- places in line ----------------------------------------------------------------------------------------

    /** Takes the request's place (a ticket living {@link JdbcLeaseBackend#PLACE_TTL}); returns when, if it tells. */
    long enqueue(Connection c, AcquireRequest request) throws SQLException;

    /** What this client keeps for the waiter behind a place taken at {@code placeSince}, or {@code oldBell}. */
    default String placeBell(AcquireRequest request, long placeSince, String oldBell) {
        return oldBell;
    }

    /** A place was taken (again): what was kept for the old one ({@code oldBell}) moves to the new ({@code bell}). */
    default void placeMoved(String oldBell, String bell) {
    }

    /** A place ended: what was kept for it ({@code bell}, or null) is let go, which wakes the waiter behind. */
    default void placeGone(String bell) {
    }

    /** Whether the heartbeat also finds the waiters whose turn it is, to wake them ({@link LeaseTable#refreshPlaces}). */
    default boolean heartbeatFindsTurns() {
        return false;
    }

    /** The heartbeat found the ticket of a waiter of this client gone: it is woken to take a new place now. */
    default void placeLost(LeaseTable.Ticket ticket) {
    }

    /** The heartbeat found that it is this waiter's turn (the notice of the release named one who died). */
    default void turn(LeaseTable.Ticket ticket) {
    }
}
