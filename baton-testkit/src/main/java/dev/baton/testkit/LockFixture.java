package dev.baton.testkit;

import dev.baton.LockClient;

/**
 * Binds the contract suite to one backend on its real server. Implementations have a public no-argument
 * constructor, because {@link HolderProcess} rebuilds the fixture in a child JVM.
 *
 * <p>Every client made by {@link #newClient} has connections of its own (its own pool, and for network
 * servers its own {@link dev.baton.faultproxy.FaultProxy}), so the hooks below can hurt one client without touching the others.
 */
public interface LockFixture extends AutoCloseable {

    /** Short backend name for messages, such as {@code postgresql}. */
    String name();

    /** A new, independent client. The fixture closes it in {@link #close()} if the test did not. */
    LockClient newClient(ClientConfig config);

    /**
     * Kills, on the server, every session the client has open now ({@code pg_terminate_backend},
     * {@code KILL CONNECTION}; for an embedded database, closes its connections under it).
     */
    void killServerSessions(LockClient client);

    /**
     * Makes the server unreachable for this client (a black-holed network path, or a database lock that
     * blocks its writes) until the returned handle is closed.
     */
    AutoCloseable cutOff(LockClient client);

    /**
     * How many server sessions (connections) the client has open on the server now, as the server counts
     * them ({@code pg_stat_activity}, {@code information_schema.PROCESSLIST}).
     *
     * @throws UnsupportedOperationException for an embedded database, which has no server sessions
     */
    int serverSessions(LockClient client);

    /** Ends the named lock's current lease on the server, as if its lease time had run out. */
    void expireOnServer(String lockName);

    /** Whether a release wakes waiters in other clients through a server notification. */
    boolean notifiesWaiters();

    @Override
    void close();
}
