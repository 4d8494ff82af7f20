package dev.baton.spi;

import dev.baton.LockInfo;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * What every backend implements: primitive operations against its server, nothing more. Reentrancy, waiting,
 * renewal scheduling, deadlines, lost-lease detection and listeners are written once in the core, on top of
 * these operations.
 *
 * <p>Optional abilities are sub-interfaces the core detects with {@code instanceof}; a backend implements those it
 * has, and only those:
 * <ul>
 *   <li>{@link BlockingWait} — waits on the server for a grant (PostgreSQL {@code pg_advisory_lock},
 *       MariaDB {@code GET_LOCK}, Redis blocking commands);</li>
 *   <li>{@link WaitingQueue} — keeps a waiter's place in a server-side line across the core's wait slices
 *       (a ZooKeeper sequential node, a ticket row, a writer's claim) and withdraws it on give-up;</li>
 *   <li>{@link NotifiesReleases} — hears of releases from the server (LISTEN/NOTIFY, pub/sub, watches);</li>
 *   <li>{@link ReadWriteModes} — accepts {@link LockMode#READ} and {@link LockMode#WRITE};</li>
 *   <li>{@link ConfirmsGrants} — tells in one round trip whether the server still shows a grant.</li>
 *   <li>{@link ReportsSessionState} — reports its server session suspended, resumed or lost (ZooKeeper), so
 *       the core holds leases uncertain, confirms them or loses them.</li>
 * </ul>
 *
 * <p>Every method may be called from several threads at once. A failure to reach the server is reported as
 * {@link dev.baton.LockBackendException} with the driver's exception as cause; a lock that is simply taken is an
 * {@link AcquireResult.Busy}, not an exception.
 */
public interface LockBackend extends AutoCloseable {

    /** A human description naming the strategy and the server, used in every message. */
    String description();

    /**
     * Called once by the core before any operation (and after {@link NotifiesReleases#listen}), with the
     * client's id, so a backend can open what it keeps open and label its server sessions (PostgreSQL
     * {@code application_name}) for introspection.
     */
    void start(String clientId);

    /**
     * One attempt to take the lock for {@code request.owner()} with a lease of {@code request.leaseTime()},
     * measured by the server's clock: a single atomic decision on the server. Without {@link ReadWriteModes} the
     * core sends {@link LockMode#EXCLUSIVE} requests only.
     */
    AcquireResult tryAcquire(AcquireRequest request);

    /**
     * Releases the grant if, and only if, name, owner and token all still match on the server.
     *
     * @return whether a grant was released
     */
    boolean release(LeaseKey lease);

    /**
     * Extends every given grant that still matches on the server, and has not expired there, to
     * {@code leaseTime} from the server's now. Implementations renew all of them in one statement, script or
     * pipeline where the server allows, so renewal cost does not grow with the number of held locks.
     *
     * @return the grants that were renewed; any other given grant is no longer held
     */
    Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime);

    /** Locks the server knows about, held or recently held. */
    List<LockInfo> inspect();

    /**
     * Releases the backend's own resources (listener connections, threads) and withdraws every waiting place
     * it still keeps ({@link WaitingQueue}). Does not release leases: the core releases them first.
     */
    @Override
    void close();
}
