package dev.baton.spring.boot;

import dev.baton.LockClient;
import dev.baton.spi.AbstractClientBuilder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The lock clients the starter builds: its main one (the {@code batonLockClient} bean, with {@code baton.lease-time})
 * and, for {@link WithLock#leaseTime()}, one more per other lease time, built on first use over the same backend
 * resources (the same {@code DataSource}, Redis client or URL, table, key prefix) and closed with the context.
 *
 * <p>Baton renews all of a client's leases in one batch with the client's one lease time, so another lease time
 * needs another client. Clients on the same table or key prefix are ordinary clients of the same locks: they exclude
 * each other, and a lock's fencing tokens come from one counter whichever client takes it.
 *
 * <p>Thread safety: all methods may be called from any thread.
 */
final class BatonClients implements AutoCloseable {
    private final Function<Duration, LockClient> build;
    private final Duration mainLease;
    private final String refusal;
    private final Map<Duration, LockClient> others = new ConcurrentHashMap<>();
    private volatile LockClient main;
    private volatile boolean closed;

    /**
     * @param build     builds a client like the main one, with the given lease time (null: the main one's)
     * @param mainLease the main client's lease time
     * @param refusal   why this backend cannot give a lock another lease time, or null if it can
     */
    private BatonClients(Function<Duration, LockClient> build, Duration mainLease, String refusal) {
        this.build = build;
        this.mainLease = mainLease;
        this.refusal = refusal;
    }

    /**
     * Clients built by {@code build} (given a lease time, or null for the main client's); the main one has
     * {@code configuredLease} ({@code baton.lease-time}), or the builders' default if null.
     */
    static BatonClients of(Function<Duration, LockClient> build, Duration configuredLease) {
        return new BatonClients(build, configuredLease != null ? configuredLease
                : AbstractClientBuilder.DEFAULT_LEASE_TIME, null);
    }

    /** Only a main client: a lock's lease cannot differ from it on this backend, because of {@code why}. */
    static BatonClients refusing(Function<Duration, LockClient> build, String why) {
        return new BatonClients(build, null, why);
    }

    /** The main client, built on the first call. */
    synchronized LockClient main() {
        if (main == null) {
            main = build.apply(null);
        }
        return main;
    }

    /** Whether {@code client} is the main client this built. */
    boolean isMain(LockClient client) {
        return client != null && client == main;
    }

    /**
     * The client whose leases last {@code leaseTime}: the main one if that is its lease time, else one built for it
     * (once).
     *
     * @param where the method, for messages ({@code @WithLock on Class.method})
     * @throws IllegalStateException if this backend cannot give a lock its own lease time, or the context is closed
     */
    LockClient forLease(Duration leaseTime, String where) {
        if (refusal != null) {
            throw new IllegalStateException(where + " sets leaseTime = " + leaseTime + ", which this backend cannot"
                    + " honour: " + refusal + ". Remove leaseTime from the annotation (the method then runs under"
                    + " the client's own lease)");
        }
        if (leaseTime.equals(mainLease)) {
            return main();
        }
        if (closed) {
            throw closed(where);
        }
        LockClient client = others.computeIfAbsent(leaseTime, build);
        if (closed) {
            // closed while it was built: close it unless close() took it first (exactly one of them removes it)
            if (others.remove(leaseTime, client)) {
                client.close();
            }
            throw closed(where);
        }
        return client;
    }

    private static IllegalStateException closed(String where) {
        return new IllegalStateException(where + ": the application context is closed, and with it the lock clients"
                + " for other lease times");
    }

    /** Closes the clients built for other lease times (the main one is its bean's to close). */
    @Override
    public void close() {
        closed = true;
        List<RuntimeException> failures = new ArrayList<>();
        for (Duration leaseTime : List.copyOf(others.keySet())) {
            LockClient client = others.remove(leaseTime); // whoever removes a client closes it, once
            if (client == null) {
                continue;
            }
            try {
                client.close();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.stream().skip(1).forEach(first::addSuppressed);
            throw first;
        }
    }
}
