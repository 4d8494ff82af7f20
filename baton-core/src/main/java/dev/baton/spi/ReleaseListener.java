package dev.baton.spi;

/**
 * How a backend that hears of releases from its server (PostgreSQL {@code LISTEN/NOTIFY}, Redis pub/sub,
 * ZooKeeper watches) wakes the core's waiters. Calls may come from any thread and must be cheap.
 */
public interface ReleaseListener {

    /** The named lock was released somewhere; waiters for it should try again now. */
    void released(String name);

    /**
     * Notifications may have been missed (the notification channel dropped and was re-established); every
     * waiter should try again now.
     */
    void resynchronize();
}
