package dev.baton.spi;

/**
 * How a backend that hears of releases from its server (PostgreSQL {@code LISTEN/NOTIFY}, Redis pub/sub,
 * ZooKeeper watches) wakes the core's waiters. Calls may come from any thread and must be cheap.
 */
public interface ReleaseListener {

    /** The named lock was released somewhere; waiters for it should try again now. */
    void released(String name);

    /**
     * The named lock was released (or a waiter ahead left) and the server's line says the waiter of {@code owner} (an
     * {@link AcquireRequest#owner()}) is next: only that waiter need try again; this client's other waiters for the
     * lock keep their park (their own turn is announced to them). The default wakes every waiter of the lock, as
     * {@link #released(String)}.
     */
    default void released(String name, String owner) {
        released(name);
    }

    /**
     * Notifications may have been missed (the notification channel dropped and was re-established); every
     * waiter should try again now.
     */
    void resynchronize();
}
