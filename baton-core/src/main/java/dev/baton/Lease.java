package dev.baton;

import java.time.Instant;
import java.util.function.Consumer;

/**
 * Proof of holding a lock: one hold, returned by {@link DistributedLock#acquire}. Closing it gives the hold
 * back; the lock is released on the server when the last hold of the thread is closed.
 *
 * <p>While held, the lease is renewed automatically in the background. It is <em>valid</em> while it has
 * not been released and its conservative local deadline has not passed: that deadline is the local
 * monotonic time at which the last successful grant or renewal was <em>sent</em>, plus the lease time the
 * server applied, so the local view always ends no later than the server's. A lease whose renewal keeps
 * failing until that deadline, or which the server shows another holder took over, is <em>lost</em>: it
 * reports invalid and its {@link #onLost} listeners run, once. A deadline that passed while no renewal had failed
 * (the process was paused: a long GC, a stopped container) makes the lease invalid but not yet lost: on the JDBC
 * and Redis backends it is renewed once more first, and is valid again if the server still showed the grant.
 *
 * <p>A lease cannot stop a paused holder from waking up and acting after it was lost. Pass
 * {@link #fencingToken()} to the protected resource and have it refuse tokens lower than the highest it
 * has seen.
 *
 * <p>Thread safety: all methods may be called from any thread.
 */
public interface Lease extends AutoCloseable {

    /** The lock name. */
    String lockName();

    /**
     * The fencing token of this grant: strictly greater than the token of every earlier grant of the same
     * lock, across holders, clients and restarts. Reentrant holds of one thread share the token.
     */
    long fencingToken();

    /** The holder id stored on the server: the client id plus the holding thread. */
    String holderId();

    /** Local wall-clock time at which the lock was granted (for display only). */
    Instant acquiredAt();

    /** How many holds the owning thread has on this lock now (1 for a first acquisition). */
    int holdCount();

    /**
     * Whether the lease is still held and within its conservative deadline, by the client's local state.
     * Never blocks and makes no round trip, so it can lag the server: a loss that the server decides on its
     * own (a lease strategy's row taken over after expiry, a session strategy's server session terminated
     * or killed, a network cut) shows here only when the client next learns of it — at the next renewal or
     * keepalive probe (every {@code renewInterval}, default a third of the lease time; configurable on the
     * builder) plus that round trip, and never later than the conservative deadline. Use
     * {@link #checkValid()} before a critical write.
     */
    boolean isValid();

    /**
     * Returns normally if the lease is valid <em>on the server, now</em>: after the local checks, backends
     * that can confirm a grant (the JDBC lease and session strategies) ask the server in one round trip
     * whether it still shows this grant (owner and token, unexpired; for the session strategy, held by the
     * client's live server session). A grant the server no longer shows is marked lost here — its
     * {@link #onLost} listeners run once — and this method throws. A backend that cannot confirm answers from
     * the local state, as {@link #isValid()} does.
     *
     * @throws LockLostException    if the lease was lost or released, with the reason
     * @throws LockBackendException if the server could not be asked; validity is then unknown, so treat it
     *                              as not confirmed
     */
    void checkValid();

    /**
     * Registers a listener run once when the lease is lost (never when it is released normally). If the
     * lease is already lost, the listener runs at once on the calling thread. Listeners otherwise run on a
     * Baton background thread — or, for a lease whose deadline passed unnoticed, on the thread that closes a hold
     * on it, before {@link #close()} returns (a listener that interrupts the holding thread then interrupts that
     * one) — and must return quickly; an exception from a listener is logged and ignored.
     *
     * @throws IllegalArgumentException if the listener is null
     */
    void onLost(Consumer<LockLostException> listener);

    /**
     * Gives this hold back. Closing a lease twice has no further effect. A lease that is lost (or whose deadline
     * has passed: it is marked lost here first, and its {@link #onLost} listeners run on this thread) is released on
     * a best-effort basis: a failure to reach the backend is logged, not thrown.
     *
     * @throws LockBackendException if the release of a valid lease could not reach the backend; the lease then ends
     *                              on the server when its lease time runs out, since it is no longer renewed
     */
    @Override
    void close();
}
