package dev.baton.spi;

/**
 * Capability of a backend that can tell, in one round trip, whether the server still shows a grant as held.
 * The core calls it from {@link dev.baton.Lease#checkValid()}, the call a user makes before a critical write,
 * so that check is exact rather than bounded by the renewal interval. A backend without it leaves
 * {@code checkValid()} to the local state (renewal and deadline), and its documentation must say so.
 *
 * <p>Over such a backend the core also treats a local deadline that passed while no renewal had failed (the process
 * was paused) as uncertain: it renews the grant once more ({@link #renew}, owner and token checked) before it calls
 * the lease lost.
 */
public interface ConfirmsGrants extends LockBackend {

    /**
     * Asks the server whether the grant (name, owner, token and mode) is still held, right now.
     *
     * @return true if the server shows the grant held by this client; false if it does not (expired, taken
     *         over, its server session ended)
     * @throws dev.baton.LockBackendException if the server cannot be reached, so nothing can be confirmed
     */
    boolean confirm(LeaseKey lease);

    /**
     * Whether {@link #renew} asks the server about every lease it returns as renewed. True unless the backend may
     * answer from local state (the session strategy counts a session busy with another statement as alive, without
     * a round trip): then the core also {@linkplain #confirm confirms} a grant whose local deadline passed, before
     * it counts that grant as valid again.
     */
    default boolean renewalAsksTheServer() {
        return true;
    }
}
