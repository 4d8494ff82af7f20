package dev.baton;

import java.time.Duration;

/**
 * Told what a lock client does: acquisitions and their outcome, grants, releases, losses and renewals. For metrics
 * and tracing ({@code baton-micrometer} implements it), or your own logging. Set one per client on its builder
 * ({@link dev.baton.spi.AbstractClientBuilder#observer}); one observer may serve several clients, since every call
 * names the client's backend. A client without an observer makes none of these calls.
 *
 * <p>Every method has an empty default, so an observer implements only what it needs. Methods run on the thread
 * that does the work — the acquiring or releasing thread, or a Baton background thread (renewal, watchdog) for
 * losses and renewals — inside no lock of Baton's, and must return quickly. An exception thrown by an observer is
 * logged and ignored; it never changes the outcome of the call it observes.
 *
 * <p>Thread safety: implementations are called from many threads at once.
 */
public interface LockObserver {
    /** An observer that does nothing: the default of every client. */
    LockObserver NONE = new LockObserver() {
    };

    /** How an acquisition ended. */
    enum Outcome {
        /** Granted: a new grant, or a re-entrant hold of a lock the thread already held. */
        GRANTED,
        /** A try-once ({@code tryAcquire()}, {@code tryLock()}) found the lock held by someone else. */
        BUSY,
        /** A bounded wait ended without the lock ({@link LockTimeoutException}). */
        TIMEOUT,
        /** Any other exception: the backend failed, the thread was interrupted, the client was closed, … */
        ERROR
    }

    /** Why a lease was lost (see {@link Lease#onLost}). */
    enum LossCause {
        /** No successful renewal before the lease's local deadline (the server unreachable, the client stalled). */
        DEADLINE,
        /**
         * The server no longer shows the grant: it expired there or another holder took it over, or the connection
         * that held it ended (the JDBC session strategy's lost connection is reported so, at the next renewal).
         */
        NOT_ON_SERVER,
        /** A renewal found less time left on the server than the client counted on: the server's clock jumped. */
        CLOCK_JUMP,
        /**
         * The backend's server session ended and it said so (ZooKeeper's session expiry). The JDBC session strategy's
         * lost connection shows as {@link #NOT_ON_SERVER} instead.
         */
        SESSION_LOST,
        /** The lock client was closed while the lease was held. */
        CLIENT_CLOSED
    }

    /** One acquisition in progress, told once how it ended. */
    interface Acquisition {
        /** An acquisition nobody is told about. */
        Acquisition NONE = (outcome, latency, waited, error) -> {
        };

        /**
         * The acquisition ended.
         *
         * @param outcome how
         * @param latency the whole call, from its start to its return
         * @param waited  how long it waited behind another holder: from the first answer that the lock was busy to
         *                the end; zero if the first attempt decided it
         * @param error   the exception the call throws, or null for {@link Outcome#GRANTED} and {@link Outcome#BUSY}
         */
        void ended(Outcome outcome, Duration latency, Duration waited, Throwable error);
    }

    /**
     * An acquisition of {@code lockName} starts on the calling thread, which also receives the returned
     * {@link Acquisition#ended} call.
     *
     * @param backend  the client's {@link LockClient#backend()}
     * @param lockName the lock's name
     * @param waits    false for a try-once, true for an acquisition that may wait
     * @return what to tell how it ended ({@link Acquisition#NONE} by default)
     */
    default Acquisition acquireStarted(String backend, String lockName, boolean waits) {
        return Acquisition.NONE;
    }

    /** A new grant (not a re-entrant hold): the lease is now held, with this fencing token. */
    default void leaseGranted(String backend, String lockName, long fencingToken) {
    }

    /**
     * The last hold of a grant was closed and the grant given back.
     *
     * @param held    from the grant to the release
     * @param wasLost whether the lease had been lost before ({@link #leaseLost} was called for it then)
     */
    default void leaseReleased(String backend, String lockName, Duration held, boolean wasLost) {
    }

    /** A held lease was lost, once per grant, before its {@link Lease#onLost} listeners run. */
    default void leaseLost(String backend, String lockName, LossCause cause, LockLostException reason) {
    }

    /**
     * One renewal round of the client's held leases ended (one backend call for all of them).
     *
     * @param renewed how many leases it renewed
     * @param failed  how many it did not: every one of the round when the call failed, else those the server no
     *                longer showed or that were found unsafe (each is then also reported {@link #leaseLost})
     * @param took    the round's duration
     */
    default void renewed(String backend, int renewed, int failed, Duration took) {
    }
}
