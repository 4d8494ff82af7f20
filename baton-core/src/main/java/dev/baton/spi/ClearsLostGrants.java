package dev.baton.spi;

/**
 * Capability of a backend whose server can keep a grant after the core declared it lost (a ZooKeeper node lives as
 * long as its session, which can outlive a lease lost during a short disconnection; a Redis key that the renewal which
 * found too little time left on it has just extended). The core tells it when it declares a grant lost because its
 * deadline passed without a successful renewal, or because a {@link ReportsTimeLeft} renewal found less time left on
 * it than the client counted on, so the backend clears the grant on the server as soon as it can, instead of when
 * the application closes the lost lease (or the server lets it expire), and the lock is not held by nobody.
 */
public interface ClearsLostGrants extends LockBackend {

    /**
     * The core declared this grant lost (its deadline passed without a successful renewal, or its renewal found too
     * little time left on it); the application has not
     * released it. Called once per grant, on the core's watchdog or renewer thread: it must not block. The backend
     * clears the grant on the server when it can, only if the server still shows it as this grant (owner and token,
     * or the server session it lives in); a later {@link #release} of it must tolerate that it is gone.
     */
    void lost(LeaseKey lease);
}
