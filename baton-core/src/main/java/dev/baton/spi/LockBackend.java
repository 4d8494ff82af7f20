package dev.baton.spi;

import dev.baton.LockInfo;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * What a backend implements: primitive operations against its server, nothing more. Reentrancy, waiting,
 * renewal scheduling, deadlines, lost-lease detection and listeners are written once in the core, on top
 * of these operations.
 *
 * <p>Every method may be called from several threads at once. A failure to reach the server is reported as
 * {@link dev.baton.LockBackendException} with the driver's exception as cause; a lock that is simply taken
 * is a {@link AcquireResult.Busy}, not an exception.
 */
public interface LockBackend extends AutoCloseable {

    /** A human description naming the strategy and the server, used in every message. */
    String description();

    /**
     * Whether {@link #start} wires server-side release notifications to the listener. When false, waiters
     * in other processes learn of a release only at the holder's expiry or at a backoff poll.
     */
    boolean notifiesReleases();

    /**
     * Called once by the core, before {@link #start}, with the client's id, so a backend can label its
     * server sessions (PostgreSQL {@code application_name}) for introspection. Default: ignored.
     */
    default void identify(String clientId) {
    }

    /**
     * Called once by the core before any other operation. A notifying backend delivers releases heard from
     * its server to the listener from then on.
     */
    void start(ReleaseListener listener);

    /**
     * One attempt to take the lock for {@code owner} with a lease of {@code leaseTime}, measured by the
     * server's clock. Must be a single atomic decision on the server.
     */
    AcquireResult tryAcquire(String name, String owner, Duration leaseTime);

    /** Whether {@link #tryAcquire(String, LockMode, String, Duration)} accepts READ and WRITE. Default: no. */
    default boolean supportsReadWrite() {
        return false;
    }

    /**
     * One attempt in a mode. A backend with read-write locks implements it; READ and WRITE attempts must
     * keep writers from starving (a waiting writer holds back new readers). The default handles
     * {@link LockMode#EXCLUSIVE} only.
     */
    default AcquireResult tryAcquire(String name, LockMode mode, String owner, Duration leaseTime) {
        if (mode == LockMode.EXCLUSIVE) {
            return tryAcquire(name, owner, leaseTime);
        }
        throw new UnsupportedOperationException(description() + " has no read-write locks");
    }

    /** As {@link #acquireBlocking(String, String, Duration, Duration)}, in a mode. Default: exclusive only. */
    default AcquireResult acquireBlocking(String name, LockMode mode, String owner, Duration leaseTime,
                                          Duration maxWait) {
        return mode == LockMode.EXCLUSIVE ? acquireBlocking(name, owner, leaseTime, maxWait) : null;
    }

    /**
     * The caller stopped waiting for {@code name} in {@code mode} (timeout, interruption), so the backend can
     * withdraw what it left on the server to be served next (a writer's claim that holds back new readers).
     * Default: nothing.
     */
    default void abandon(String name, LockMode mode, String owner) {
    }

    /**
     * Waits on the server for the lock, at most {@code maxWait} (the core passes short slices, so that it
     * can check for interruption and closing between them), using the server's own blocking wait
     * ({@code pg_advisory_lock} with {@code lock_timeout}, {@code GET_LOCK} with a timeout). Returns
     * {@code null} if the backend has no blocking wait, or none is available to this caller right now; the
     * core then parks and polls as for {@link #tryAcquire}. Default: {@code null}.
     */
    default AcquireResult acquireBlocking(String name, String owner, Duration leaseTime, Duration maxWait) {
        return null;
    }

    /**
     * Releases the grant if, and only if, name, owner and token all still match on the server.
     *
     * @return whether a grant was released
     */
    boolean release(LeaseKey lease);

    /**
     * Extends every given grant that still matches on the server, and has not expired there, to
     * {@code leaseTime} from the server's now. Implementations renew all of them in one statement, script
     * or pipeline where the server allows, so renewal cost does not grow with the number of held locks.
     *
     * @return the grants that were renewed; any other given grant is no longer held
     */
    Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime);

    /** Locks the server knows about, held or recently held. */
    List<LockInfo> inspect();

    /** Releases the backend's own resources (listener connections, threads). Does not release leases. */
    @Override
    void close();
}
