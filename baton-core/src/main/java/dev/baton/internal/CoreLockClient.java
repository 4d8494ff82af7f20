package dev.baton.internal;

import dev.baton.DistributedLock;
import dev.baton.DistributedReadWriteLock;
import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockClientClosedException;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.LockInterruptedException;
import dev.baton.LockLostException;
import dev.baton.LockNames;
import dev.baton.LockTimeoutException;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.LockBackend;
import dev.baton.spi.ReleaseListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The backend-independent client: reentrancy, waiting, batched renewal and lost-lease detection over a
 * {@link LockBackend}.
 *
 * <p>Algorithm of an acquisition by thread T of lock N:
 * <ol>
 *   <li>If T already holds N: add a hold and return (no round trip); refuse if that lease was lost.</li>
 *   <li>Register as a waiter on N (so a release from now on leaves a wake-up behind).</li>
 *   <li>Attempt on the backend. Granted: record the hold with deadline = send time + lease time.</li>
 *   <li>Busy: park until the holder's server-side expiry, the current backoff (doubling from
 *       minPollInterval to maxPollInterval, with jitter), or the caller's deadline, whichever is first;
 *       a release in this client or one heard from the server wakes the waiter at once. Repeat 3.</li>
 * </ol>
 * Renewal: one thread renews every held lease in one backend call per interval; a grant the server no
 * longer shows as ours is lost at once. A separate watchdog thread marks leases lost when their
 * conservative deadline passes, so a renewal stuck in the network cannot delay the loss notice.
 */
public final class CoreLockClient implements LockClient {
    private static final Logger log = LoggerFactory.getLogger(CoreLockClient.class);
    /** Longest single server-side blocking wait, so interruption and close are noticed between slices. */
    private static final long BLOCKING_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final LockBackend backend;
    private final ClientSettings settings;
    private final String clientId;
    private final String description;
    private final WakeBoard wakeBoard = new WakeBoard();
    /** Holds by (name, thread). Only the owning thread adds a hold; any thread may drop one. */
    private final ConcurrentHashMap<HoldKey, Hold> holds = new ConcurrentHashMap<>();
    private final ScheduledExecutorService renewer;
    private final ScheduledExecutorService watchdog;
    private volatile boolean closed;

    private record HoldKey(String name, LockMode mode, long threadId) {
    }

    public CoreLockClient(LockBackend backend, ClientSettings settings) {
        this.backend = backend;
        this.settings = settings;
        this.description = backend.description();
        this.clientId = newClientId(settings.clientIdPrefix());
        this.renewer = Executors.newSingleThreadScheduledExecutor(daemon("baton-renewer"));
        this.watchdog = Executors.newSingleThreadScheduledExecutor(daemon("baton-watchdog"));
        backend.identify(clientId);
        backend.start(new ReleaseListener() {
            @Override
            public void released(String name) {
                wakeBoard.signal(name);
            }

            @Override
            public void resynchronize() {
                wakeBoard.signalAll();
            }
        });
        long renewNanos = settings.renewInterval().toNanos();
        renewer.scheduleWithFixedDelay(this::renewAll, renewNanos, renewNanos, TimeUnit.NANOSECONDS);
        long checkNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(5),
                Math.min(settings.leaseTime().toNanos() / 20, TimeUnit.MILLISECONDS.toNanos(250)));
        watchdog.scheduleWithFixedDelay(this::expireOverdue, checkNanos, checkNanos, TimeUnit.NANOSECONDS);
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    private static String newClientId(String prefix) {
        String host = prefix;
        if (host == null) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "unknown-host";
            }
            if (host.length() > 64) {
                host = host.substring(0, 64);
            }
        }
        long pid = ProcessHandle.current().pid();
        String suffix = Long.toString(ThreadLocalRandom.current().nextLong() & 0xFFFFFFFFFFL, 36);
        return host + "/" + pid + "/" + suffix;
    }

    long now() {
        return settings.ticker().getAsLong();
    }

    @Override
    public DistributedLock lock(String name) {
        return new CoreLock(this, LockNames.validate(name), LockMode.EXCLUSIVE);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        LockNames.validate(name);
        if (!backend.supportsReadWrite()) {
            throw new UnsupportedOperationException(description + " has no read-write locks; the JDBC lease"
                    + " strategy (every database) and the PostgreSQL session strategy have them");
        }
        DistributedLock read = new CoreLock(this, name, LockMode.READ);
        DistributedLock write = new CoreLock(this, name, LockMode.WRITE);
        return new DistributedReadWriteLock() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public DistributedLock readLock() {
                return read;
            }

            @Override
            public DistributedLock writeLock() {
                return write;
            }

            @Override
            public String toString() {
                return "DistributedReadWriteLock[" + name + " on " + description + "]";
            }
        };
    }

    @Override
    public <T> T withLock(String name, Duration maxWait, Supplier<T> task) {
        if (task == null) {
            throw new IllegalArgumentException("task must not be null");
        }
        try (Lease ignored = lock(name).acquire(maxWait)) {
            return task.get();
        }
    }

    @Override
    public void withLock(String name, Duration maxWait, Runnable task) {
        if (task == null) {
            throw new IllegalArgumentException("task must not be null");
        }
        try (Lease ignored = lock(name).acquire(maxWait)) {
            task.run();
        }
    }

    @Override
    public List<LockInfo> list() {
        checkOpen();
        return backend.inspect();
    }

    @Override
    public String clientId() {
        return clientId;
    }

    @Override
    public String backend() {
        return description;
    }

    private void checkOpen() {
        if (closed) {
            throw new LockClientClosedException("lock client " + clientId + " on " + description + " is closed");
        }
    }

    boolean isHeldByCurrentThread(String name, LockMode mode) {
        return holds.containsKey(new HoldKey(name, mode, Thread.currentThread().getId()));
    }

    /**
     * Acquires {@code name} for the current thread.
     *
     * @param maxWaitNanos negative to wait forever, 0 to try once
     * @return the lease, or null if {@code maxWaitNanos == 0} and the lock is busy and {@code throwOnBusy}
     *         is false
     */
    Lease acquire(String name, LockMode mode, long maxWaitNanos, boolean interruptible, boolean throwOnBusy) {
        // A try-once does not wait, so it has nothing to interrupt: like Lock.tryLock() it ignores the flag
        return attempt(name, mode, maxWaitNanos, interruptible && maxWaitNanos != 0, throwOnBusy);
    }

    /**
     * The acquisition. When not {@code interruptible}, the interrupt flag is hidden from the backend (a pool
     * refuses to lend a connection to an interrupted thread: HikariCP's "Interrupted during connection
     * acquisition") and set again on return, with any interrupt that arrived meanwhile.
     */
    private Lease attempt(String name, LockMode mode, long maxWaitNanos, boolean interruptible, boolean throwOnBusy) {
        boolean[] deferredInterrupt = {!interruptible && Thread.interrupted()};
        try {
            return attempt(name, mode, maxWaitNanos, interruptible, throwOnBusy, deferredInterrupt);
        } finally {
            if (deferredInterrupt[0]) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@code deferredInterrupt[0]}: set when a non-interruptible wait was interrupted, for the caller to restore. */
    private Lease attempt(String name, LockMode mode, long maxWaitNanos, boolean interruptible, boolean throwOnBusy,
                          boolean[] deferredInterrupt) {
        checkOpen();
        Thread thread = Thread.currentThread();
        HoldKey hk = new HoldKey(name, mode, thread.getId());
        Hold existing = holds.get(hk);
        if (existing != null) {
            LockLostException invalid = existing.invalidReason(now());
            if (invalid == null && existing.tryAddHold()) {
                return new LeaseHandle(this, existing);
            }
            if (existing.state() != Hold.State.RELEASED) {
                // lost, or past its deadline: a re-entrant hold on it would not be held
                throw invalid != null ? invalid : existing.invalidReason(now());
            }
            // released by another thread a moment ago: acquire afresh
            holds.remove(hk, existing);
        }
        if (mode != LockMode.EXCLUSIVE) {
            LockMode other = mode == LockMode.READ ? LockMode.WRITE : LockMode.READ;
            if (holds.containsKey(new HoldKey(name, other, thread.getId()))) {
                throw new IllegalStateException("thread " + thread.getName() + " holds the " + other.name().toLowerCase()
                        + " side of read-write lock '" + name + "' and asks for the " + mode.name().toLowerCase()
                        + " side: it would wait for itself (no upgrade or downgrade); close the other side first");
            }
        }
        String owner = clientId + "#" + thread.getId();
        long start = now();
        boolean forever = maxWaitNanos < 0;
        long minPoll = settings.minPollInterval().toNanos();
        long maxPoll = settings.maxPollInterval().toNanos();
        long backoff = minPoll;
        AcquireResult.Busy lastBusy = null;
        WakeBoard.Waiter waiter = wakeBoard.register(name);
        try {
            while (true) {
                checkOpen();
                if (interruptible && Thread.interrupted()) {
                    abandon(name, mode, owner);
                    throw interrupted(name, start);
                }
                waiter.drain();
                long sent = now();
                AcquireResult result = backend.tryAcquire(name, mode, owner, settings.leaseTime());
                if (result instanceof AcquireResult.Granted granted) {
                    return grant(hk, name, owner, granted, sent);
                }
                lastBusy = (AcquireResult.Busy) result;
                long waited = now() - start;
                long left = forever ? Long.MAX_VALUE : maxWaitNanos - waited;
                if (left <= 0) {
                    abandon(name, mode, owner);
                    if (!throwOnBusy) {
                        return null;
                    }
                    throw timeout(name, waited, lastBusy);
                }
                // a backend with a server-side blocking wait waits there, in slices
                sent = now();
                AcquireResult blocked = backend.acquireBlocking(name, mode, owner, settings.leaseTime(),
                        Duration.ofNanos(Math.min(left, BLOCKING_SLICE_NANOS)));
                if (blocked instanceof AcquireResult.Granted granted) {
                    return grant(hk, name, owner, granted, sent);
                }
                if (blocked != null) {
                    lastBusy = (AcquireResult.Busy) blocked;
                    backoff = minPoll;
                    continue;
                }
                long jittered = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
                long park = Math.min(jittered, left);
                if (lastBusy.remaining() != null) {
                    // wake just after the holder's lease ends on the server
                    // (saturated: a lease ending in centuries, such as another strategy's marker row, must not overflow)
                    long untilExpiry = CoreLock.saturatedNanos(lastBusy.remaining());
                    untilExpiry += Math.min(TimeUnit.MILLISECONDS.toNanos(1), Long.MAX_VALUE - untilExpiry);
                    park = Math.min(park, Math.max(untilExpiry, 0));
                }
                backoff = Math.min(backoff * 2, maxPoll);
                try {
                    waiter.await(park, interruptible);
                } catch (InterruptedException e) {
                    abandon(name, mode, owner);
                    throw interrupted(name, start);
                }
                if (!interruptible && Thread.interrupted()) {
                    deferredInterrupt[0] = true; // hidden from the next backend call, set again on return
                }
            }
        } finally {
            wakeBoard.unregister(waiter);
        }
    }

    private void abandon(String name, LockMode mode, String owner) {
        if (mode == LockMode.EXCLUSIVE) {
            return;
        }
        try {
            backend.abandon(name, mode, owner);
        } catch (RuntimeException e) {
            log.debug("withdrawing the claim on '{}' failed; it expires on the server", name, e);
        }
    }

    private Lease grant(HoldKey hk, String name, String owner, AcquireResult.Granted granted, long sent) {
        Hold hold = new Hold(new LeaseKey(name, owner, granted.token(), hk.mode()), hk.threadId(),
                sent + settings.leaseTime().toNanos(), description);
        holds.put(hk, hold);
        if (closed) {
            // close() may have missed this hold; give it back rather than leak it
            dropHold(hold);
            checkOpen();
        }
        return new LeaseHandle(this, hold);
    }

    private LockInterruptedException interrupted(String name, long start) {
        Thread.currentThread().interrupt();
        return new LockInterruptedException(name, "interrupted after waiting " + millis(now() - start)
                + " ms for lock '" + name + "' on " + description);
    }

    private LockTimeoutException timeout(String name, long waitedNanos, AcquireResult.Busy busy) {
        String holder = busy.holder();
        StringBuilder msg = new StringBuilder("lock '").append(name).append("' not acquired within ")
                .append(millis(waitedNanos)).append(" ms on ").append(description);
        if (holder != null) {
            msg.append(": held by ").append(holder);
            if (busy.token() >= 0) {
                msg.append(" (token ").append(busy.token());
                if (busy.remaining() != null) {
                    msg.append(", lease ends in ").append(busy.remaining().toMillis()).append(" ms");
                }
                msg.append(')');
            }
        } else {
            msg.append(": held by another client");
        }
        return new LockTimeoutException(name, Duration.ofNanos(waitedNanos), holder, busy.token(), busy.remaining(),
                msg.toString());
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** Drops one hold; on the last one, releases on the backend and wakes local waiters. */
    void dropHold(Hold hold) {
        Hold.State before = hold.state();
        if (!hold.dropHold()) {
            return;
        }
        holds.remove(new HoldKey(hold.key.name(), hold.key.mode(), hold.threadId), hold);
        // a release in a finally block often runs on an interrupted thread: hide the flag from the backend (a
        // pool refuses an interrupted borrower) and set it again after
        boolean interrupted = Thread.interrupted();
        try {
            if (before == Hold.State.HELD) {
                boolean released = backend.release(hold.key);
                if (!released) {
                    log.warn("release of '{}' (token {}) found no matching grant on {}: it had expired and may "
                            + "have been taken over", hold.key.name(), hold.key.token(), description);
                }
            } else {
                // a lost lease: the server may still show it as ours until it expires; clear it if so
                backend.release(hold.key);
            }
        } catch (LockBackendException e) {
            if (before == Hold.State.HELD) {
                throw new LockBackendException(description, "release of '" + hold.key.name() + "' (token "
                        + hold.key.token() + ") failed; it is no longer renewed and ends on the server within "
                        + settings.leaseTime().toMillis() + " ms", e.getCause() != null ? e.getCause() : e);
            }
            log.debug("release of lost lease '{}' failed", hold.key.name(), e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            wakeBoard.signal(hold.key.name());
        }
    }

    /** Renews every held lease in one backend call. Runs on the renewer thread. */
    private void renewAll() {
        try {
            List<Hold> batch = new ArrayList<>();
            for (Hold h : holds.values()) {
                if (h.isValid(now())) {
                    batch.add(h);
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            List<LeaseKey> keys = new ArrayList<>(batch.size());
            batch.forEach(h -> keys.add(h.key));
            long sent = now();
            Set<LeaseKey> renewed;
            try {
                renewed = backend.renew(keys, settings.leaseTime());
            } catch (LockBackendException e) {
                log.warn("renewal of {} lease(s) failed on {}: {}", keys.size(), description, e.getMessage());
                return;
            }
            long deadline = sent + settings.leaseTime().toNanos();
            for (Hold h : batch) {
                if (renewed.contains(h.key)) {
                    h.extendDeadline(deadline);
                } else if (h.state() == Hold.State.HELD) {
                    h.markLost("the server no longer shows this grant (it expired there or was taken over)",
                            null);
                }
            }
        } catch (RuntimeException e) {
            log.error("unexpected error in lease renewal on {}", description, e);
        }
    }

    /**
     * Asks a backend that {@link ConfirmsGrants} whether the server still shows the grant; marks the hold lost
     * (listeners run once) if it does not. Returns whether the grant is confirmed, or true without a round
     * trip for a backend that cannot confirm (its validity is the local one).
     */
    boolean confirm(Hold hold) {
        if (!(backend instanceof ConfirmsGrants confirming)) {
            return true;
        }
        if (confirming.confirm(hold.key)) {
            return true;
        }
        hold.markLost("the server no longer shows this grant (checked by checkValid)", null);
        return false;
    }

    /** Marks leases lost once their conservative deadline has passed. Runs on the watchdog thread. */
    private void expireOverdue() {
        try {
            long now = now();
            for (Hold h : holds.values()) {
                if (h.state() == Hold.State.HELD && now - h.deadlineNanos() >= 0) {
                    h.markLost("no successful renewal before its deadline (lease time "
                            + settings.leaseTime().toMillis() + " ms)", null);
                }
            }
        } catch (RuntimeException e) {
            log.error("unexpected error in lease watchdog on {}", description, e);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        renewer.shutdownNow();
        watchdog.shutdownNow();
        Map<HoldKey, Hold> snapshot = new HashMap<>(holds);
        holds.clear();
        for (Hold h : snapshot.values()) {
            boolean wasHeld = h.state() == Hold.State.HELD;
            h.markLost("the lock client was closed while the lease was held", null);
            if (wasHeld) {
                try {
                    backend.release(h.key);
                } catch (RuntimeException e) {
                    log.warn("could not release '{}' while closing the client; it ends on the server within {} ms",
                            h.key.name(), settings.leaseTime().toMillis(), e);
                }
            }
        }
        wakeBoard.signalAll();
        backend.close();
    }

    Optional<Lease> tryAcquire(String name, LockMode mode) {
        return Optional.ofNullable(acquire(name, mode, 0, true, false));
    }
}
