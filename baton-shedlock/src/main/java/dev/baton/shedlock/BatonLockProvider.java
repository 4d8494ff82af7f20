package dev.baton.shedlock;

import dev.baton.Lease;
import dev.baton.LockClient;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A ShedLock {@link ExtensibleLockProvider} on any Baton {@link LockClient}: swap the {@code LockProvider} bean and
 * keep {@code @SchedulerLock}. Each ShedLock lock is one Baton lease of the same name, so the running task can read
 * its fencing token through {@link BatonShedLock#currentToken()}.
 *
 * <p>How ShedLock's settings map onto a Baton lease:
 * <ol>
 *   <li>{@link #lock} tries once ({@code tryAcquire}); a lock this provider already holds, or keeps for
 *       {@code lockAtLeastFor}, is refused locally (Baton locks are re-entrant per thread, ShedLock locks are not).</li>
 *   <li>While held, Baton renews the lease in the background: the lock does not lapse while this process lives, and a
 *       process that dies loses it after the client's lease time (a ZooKeeper or JDBC session strategy: when its
 *       session ends), usually far sooner than {@code lockAtMostFor}.</li>
 *   <li>{@code lockAtMostFor} is a cap: a lock still held then is released by this provider, as ShedLock's own
 *       providers let it expire. Times are measured on the local monotonic clock from just before the acquisition
 *       was sent.</li>
 *   <li>{@link SimpleLock#unlock()} before {@code lockAtLeastFor} has passed keeps the lease held (and renewed) until
 *       then, so every other process is still excluded; then it is released.</li>
 *   <li>{@link SimpleLock#extend} keeps the same lease and fencing token, after asking the server that it is still
 *       held ({@link Lease#checkValid()}); it restarts both durations from now. A lock that cannot be extended (past
 *       its cap, lost, or the server could not be asked) is released and {@code extend} returns empty.</li>
 * </ol>
 *
 * <p>A lease Baton reports lost (renewal failed until its deadline, session expired) ends the ShedLock lock at once;
 * the task is not stopped (ShedLock cannot stop it), which is why it should pass {@link BatonShedLock#currentToken()}
 * to the resource it writes, or call {@link BatonShedLock#checkValid()} before a critical write.
 *
 * <p>{@code lockAtLeastFor} lasts only while this provider and its client are open: {@link #close()} (and closing
 * the client) releases every lock still kept, as a process that stops releases its Baton leases.
 *
 * <p>Thread safety: one instance serves every thread; {@code unlock} and {@code extend} may be called from any
 * thread.
 */
public final class BatonLockProvider implements ExtensibleLockProvider, AutoCloseable {
    private final LockClient client;
    /** Locks this provider holds or keeps for lockAtLeastFor, by name: at most one grant per name. */
    private final ConcurrentMap<String, Grant> active = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    /**
     * A provider on this client. The client stays the caller's: closing the provider does not close it.
     *
     * @throws IllegalArgumentException if the client is null
     */
    public BatonLockProvider(LockClient client) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        this.client = client;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "baton-shedlock-timer");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.timer = executor;
    }

    /**
     * Tries once to take the lock named by the configuration.
     *
     * @return the lock, or empty if another holder (another process, or this provider) has it
     * @throws dev.baton.LockBackendException if the backend could not be reached
     * @throws dev.baton.LockException        if the client is closed or refuses the name
     * @throws IllegalArgumentException       if the name is not a valid Baton lock name
     * @throws IllegalStateException          if this provider was closed
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Objects.requireNonNull(configuration, "configuration");
        String name = configuration.getName();
        if (timer.isShutdown()) {
            throw new IllegalStateException("BatonLockProvider is closed: cannot lock '" + name + "'");
        }
        Grant previous = active.get(name);
        if (previous != null) {
            previous.endIfDue(); // its time is up even if the timer thread has not run yet
        }
        long start = System.nanoTime();
        Grant grant = new Grant(name, this);
        if (active.putIfAbsent(name, grant) != null) {
            return Optional.empty();
        }
        Optional<Lease> lease;
        try {
            lease = client.lock(name).tryAcquire();
        } catch (RuntimeException e) {
            active.remove(name, grant);
            throw e;
        }
        if (lease.isEmpty()) {
            active.remove(name, grant);
            return Optional.empty();
        }
        if (lease.get().holdCount() > 1) {
            // this thread holds it already through another provider on the same client: a ShedLock lock is
            // not re-entrant, so this is "held by someone else"
            lease.get().close();
            active.remove(name, grant);
            return Optional.empty();
        }
        grant.start(lease.get(), start, configuration.getLockAtMostFor(), configuration.getLockAtLeastFor());
        BatonShedLock.pushOnCurrentThread(grant);
        return Optional.of(new BatonSimpleLock(grant));
    }

    /** The client this provider takes its leases from. */
    public LockClient client() {
        return client;
    }

    /**
     * Releases every lock this provider still holds or keeps for {@code lockAtLeastFor}, and stops its timer.
     * Does not close the client. Idempotent.
     */
    @Override
    public void close() {
        timer.shutdownNow();
        for (Grant grant : active.values()) {
            grant.end("the provider was closed", false);
        }
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    /** Releases now every lock whose lockAtMostFor or lockAtLeastFor has passed (the timer does it too). */
    void releaseDue() {
        for (Grant grant : active.values()) {
            grant.endIfDue();
        }
    }

    void forget(String name, Grant grant) {
        active.remove(name, grant);
    }

    static long nanos(java.time.Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4; // about 73 years: never
        }
    }

    static final TimeUnit NANOS = TimeUnit.NANOSECONDS;
}
