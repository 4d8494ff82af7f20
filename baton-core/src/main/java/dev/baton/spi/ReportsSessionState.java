package dev.baton.spi;

/**
 * Capability of a backend whose grants live in one server session that the client can lose touch with and find
 * again (a ZooKeeper session: ephemeral nodes live exactly as long as it does). It reports the session's state to
 * the core, which then treats every held grant accordingly:
 * <ul>
 *   <li>{@link Listener#suspended()} — the connection dropped; the session may still be alive on the server. Every
 *       held lease becomes <em>uncertain</em>: {@code isValid()} is false, but it is not lost, and its deadline
 *       still runs.</li>
 *   <li>{@link Listener#resumed()} — connected again to the same session. The core asks
 *       {@link ConfirmsGrants#confirm} about each uncertain lease: confirmed, it is valid again (and its deadline
 *       extended as by a renewal); not shown by the server, it is lost.</li>
 *   <li>{@link Listener#sessionLost()} — the session ended (expired); every lease held on it is lost, once.</li>
 * </ul>
 * Until confirmed, an uncertain lease's {@code checkValid()} asks the server too. It extends {@link ConfirmsGrants}:
 * a backend that can lose its session must be able to tell afterwards whether a grant survived.
 */
public interface ReportsSessionState extends ConfirmsGrants {

    /**
     * Called once by the core, before {@link LockBackend#start}. From start on, the backend reports every change of
     * its session's state to the listener.
     */
    void watchSession(Listener listener);

    /** How the backend tells the core about its session. Calls may come from any thread and must be cheap. */
    interface Listener {

        /** The connection to the server dropped: every held grant is uncertain until resumed or lost. */
        void suspended();

        /** Connected again to the same session: uncertain grants are confirmed one by one. */
        void resumed();

        /** The session ended on the server: every grant held on it is lost. */
        void sessionLost();
    }
}
