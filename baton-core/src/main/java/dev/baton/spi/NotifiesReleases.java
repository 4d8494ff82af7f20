package dev.baton.spi;

/**
 * Capability of a backend that hears of releases from its server (PostgreSQL {@code LISTEN/NOTIFY}, Redis
 * pub/sub, ZooKeeper watches) and wakes the core's waiters with them, so a waiter in another process learns of a
 * release at once rather than at the holder's expiry or a backoff poll.
 */
public interface NotifiesReleases extends LockBackend {

    /**
     * Called once by the core, before {@link LockBackend#start}. From start on, the backend delivers every release
     * it hears of to the listener, and calls {@link ReleaseListener#resynchronize()} whenever notifications may
     * have been missed (its channel dropped and came back).
     */
    void listen(ReleaseListener listener);
}
