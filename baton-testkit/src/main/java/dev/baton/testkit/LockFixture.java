package dev.baton.testkit;

import dev.baton.LockClient;

/**
 * Binds the contract suite to one backend on its real server. Implementations have a public no-argument
 * constructor, because {@link HolderProcess} rebuilds the fixture in a child JVM (when {@link #crossProcess()}).
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

    /**
     * Whether a fixture rebuilt in another JVM reaches the same server, so a holder can be a real process that a
     * test kills ({@link HolderProcess}). True for every fixture on a real server. A fixture whose server lives in
     * the test's own JVM (an in-memory backend) returns false and implements {@link #crash}: the ladder then runs
     * the in-process counterpart of each rung that needs a second JVM instead (LivenessContract's
     * {@code aDeadHolderFreesTheLockWithinItsBound} crashes the holder in process rather than killing a holder
     * process); nothing is skipped.
     */
    default boolean crossProcess() {
        return true;
    }

    /**
     * Makes the client vanish as a {@code kill -9} of its process would: from now on nothing it does reaches the
     * server and it releases nothing; its leases end by the strategy's own bound. The test closes the client
     * afterwards to stop its threads. Required of a fixture that is not {@link #crossProcess()}.
     *
     * @throws UnsupportedOperationException for a fixture on a real server, which kills a {@link HolderProcess}
     */
    default void crash(LockClient client) {
        throw new UnsupportedOperationException(name() + " crashes holders as real processes (HolderProcess)");
    }

    /**
     * How many places the line of {@code lockName} has on the server now, live or not yet cleaned (a strategy that
     * keeps a line of waiters: the JDBC lease table's {@code <table>_queue}).
     *
     * @throws UnsupportedOperationException for a strategy that keeps no line on the server
     */
    default int placesInLine(String lockName) {
        throw new UnsupportedOperationException(name() + " keeps no line of waiters on the server");
    }

    @Override
    void close();
}
