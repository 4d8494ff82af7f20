package dev.baton.memory;

import dev.baton.LockClient;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.LockFixture;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Binds the contract suite to one {@link InMemoryLockServer}; every client is a "process" on it. Not
 * {@link #crossProcess() cross-process}: a child JVM would get a server of its own, so a dead holder is a client
 * {@link #crash crashed} in process.
 */
public final class InMemoryFixture implements LockFixture {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();

    InMemoryLockServer server() {
        return server;
    }

    @Override
    public String name() {
        return "in-memory";
    }

    @Override
    public LockClient newClient(ClientConfig config) {
        LockClient client = InMemoryLocks.builder(server).leaseTime(config.leaseTime())
                .maxPollInterval(config.maxPollInterval())
                .minPollInterval(Duration.ofMillis(Math.min(10, config.maxPollInterval().toMillis())))
                .clientIdPrefix("contract")
                .build();
        clients.add(client);
        return client;
    }

    /**
     * Nothing is lost: a grant on the in-memory server is a record, like a lease row, not a session; the JDBC lease
     * strategy's fixtures kill connections its pool simply replaces.
     */
    @Override
    public void killServerSessions(LockClient client) {
        if (!clients.contains(client)) {
            throw new IllegalArgumentException("not a client of this fixture: " + client.clientId());
        }
    }

    @Override
    public AutoCloseable cutOff(LockClient client) {
        return server.cutOff(client);
    }

    /** As for an embedded database: the in-memory server has no sessions to count. */
    @Override
    public int serverSessions(LockClient client) {
        throw new UnsupportedOperationException("the in-memory server has no server sessions");
    }

    @Override
    public void expireOnServer(String lockName) {
        if (server.expire(lockName) == 0) {
            throw new IllegalStateException("no live grant of '" + lockName + "'");
        }
    }

    @Override
    public boolean notifiesWaiters() {
        return true;
    }

    @Override
    public boolean crossProcess() {
        return false;
    }

    @Override
    public void crash(LockClient client) {
        server.crash(client);
    }

    @Override
    public void close() {
        clients.forEach(LockClient::close);
    }
}
