package dev.baton.memory;

import dev.baton.LockClient;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LockClients;

/**
 * Builds lock clients on an {@link InMemoryLockServer}, for unit tests without a server.
 *
 * <p>Re-entrant per thread and <b>fair</b>: waiters are served first come, first served, across clients. A hold
 * ends when released, when its client is closed, or when its holder stops renewing and the lease time passes by
 * the <em>server's</em> clock (the holder crashed or was cut off). The fencing token is drawn from one counter
 * per server at grant time, so it strictly increases with every grant, across holders, clients and expiry. A
 * release wakes waiters in every client at once. Read-write locks: readers share, a writer is alone, a waiting
 * writer holds back new readers. {@code Lease.checkValid()} asks the server. Every setting of
 * {@link AbstractClientBuilder} works as on the real backends.
 *
 * <pre>{@code
 * InMemoryLockServer server = InMemoryLockServer.create();          // one per test
 * try (LockClient a = InMemoryLocks.builder(server).build();         // two "processes"
 *      LockClient b = InMemoryLocks.builder(server).build()) {
 *     try (Lease lease = a.lock("nightly-report").acquire(Duration.ofSeconds(1))) {
 *         assert b.lock("nightly-report").tryAcquire().isEmpty();
 *     }
 * }
 * }</pre>
 */
public final class InMemoryLocks {
    private InMemoryLocks() {
    }

    /**
     * A builder of clients on {@code server}.
     *
     * @throws IllegalArgumentException if {@code server} is null
     */
    public static Builder builder(InMemoryLockServer server) {
        if (server == null) {
            throw new IllegalArgumentException("server must not be null");
        }
        return new Builder(server);
    }

    /** Settings of an in-memory client: only the shared ones of {@link AbstractClientBuilder}. */
    public static final class Builder extends AbstractClientBuilder<Builder> {
        private final InMemoryLockServer server;

        private Builder(InMemoryLockServer server) {
            this.server = server;
        }

        /**
         * A new client connected to the server, standing for a process of its own.
         *
         * @throws IllegalArgumentException if the settings conflict (renewal not shorter than the lease time, a
         *                                  minimum poll above the maximum)
         */
        @Override
        public LockClient build() {
            return LockClients.create(new InMemoryBackend(server), settings());
        }
    }
}
