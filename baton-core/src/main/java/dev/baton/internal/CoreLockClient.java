package dev.baton.internal;

import dev.baton.DistributedLock;
import dev.baton.DistributedReadWriteLock;
import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockClientClosedException;
import dev.baton.LockInfo;
import dev.baton.LockNames;
import dev.baton.LockObserver;
import dev.baton.LockTimeoutException;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.AnnouncesTurns;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockBackend;
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsSessionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The backend-independent client: reentrancy, waiting, batched renewal and lost-lease detection over a
 * {@link LockBackend}. This class owns the client's life (its id, its threads, {@link #close}) and its holds (by
 * name, mode and thread: recorded by {@link #grant}, dropped by {@link #dropHold}); the rest is done by its parts,
 * each in a class of its own in this package:
 * <ul>
 *   <li>{@link Acquisition}: one acquisition's wait loop, written once over the backend's capabilities
 *       ({@link dev.baton.spi.BlockingWait}, {@link dev.baton.spi.WaitingQueue}, {@link NotifiesReleases},
 *       {@link ReadWriteModes}) as numbered steps;</li>
 *   <li>{@link Renewal}: the renewer thread renews every held lease in one backend call per interval; the watchdog
 *       thread marks leases lost when their conservative deadline passes (send time + {@link
 *       ClientSettings#localValidity()}); over a backend that {@link ConfirmsGrants confirms grants}, a lease
 *       past its deadline though no renewal of it failed is renewed once more on the confirmer thread before it
 *       counts lost;</li>
 *   <li>{@link SessionWatch}: over a backend that {@link ReportsSessionState reports its session's state}, a
 *       suspended session makes every held lease uncertain, a resumed one has them confirmed, a lost one loses them;
 *       and the confirmation of a grant with the server ({@code checkValid()}).</li>
 * </ul>
 * The parts read the fields below that are not private (set once here, never changed); the holds table is a
 * concurrent map, and each {@link Hold} guards its own state with its monitor.
 */
public final class CoreLockClient implements LockClient {
    private static final Logger log = LoggerFactory.getLogger(CoreLockClient.class);

    final LockBackend backend;
    final ClientSettings settings;
    final String clientId;
    /** The backend's description, named in messages. */
    final String description;
    final WakeBoard wakeBoard = new WakeBoard();
    /** Holds by (name, thread). Only the owning thread adds a hold; any thread may drop one. */
    final ConcurrentHashMap<HoldKey, Hold> holds = new ConcurrentHashMap<>();
    private final ScheduledExecutorService renewer;
    private final ScheduledExecutorService watchdog;
    /** Renews leases whose deadline passed without a failed renewal (see {@link Renewal}). */
    private final ExecutorService confirmer;
    /** How long a grant or renewal keeps a lease valid after its request was sent: lease time less drift margin. */
    final long validityNanos;
    private volatile boolean closed;
    /** The settings' observer behind a guard, or null without one: then no observer call is made at all. */
    final GuardedObserver observer;
    private final SessionWatch session;
    private final Renewal renewal;

    /**
     * The key of a thread's hold on a lock. Its {@code equals} and {@code hashCode} are written out: a record's
     * generated ones are linked by {@code invokedynamic} on first use, which spins method-handle classes at run
     * time on every start of a short-lived process ({@code baton run}).
     */
    record HoldKey(String name, LockMode mode, long threadId) {
        @Override
        public boolean equals(Object o) {
            return o instanceof HoldKey k && threadId == k.threadId && mode == k.mode
                    && Objects.equals(name, k.name);
        }

        @Override
        public int hashCode() {
            return (Objects.hashCode(name) * 31 + Objects.hashCode(mode)) * 31 + Long.hashCode(threadId);
        }
    }

    public CoreLockClient(LockBackend backend, ClientSettings settings) {
        this.backend = backend;
        this.settings = settings;
        this.description = backend.description();
        this.clientId = newClientId(settings.clientIdPrefix());
        this.validityNanos = settings.localValidity().toNanos();
        this.observer = settings.observer() == LockObserver.NONE ? null
                : new GuardedObserver(settings.observer(), description);
        this.renewer = Executors.newSingleThreadScheduledExecutor(daemon("baton-renewer"));
        this.watchdog = Executors.newSingleThreadScheduledExecutor(daemon("baton-watchdog"));
        this.confirmer = Executors.newSingleThreadExecutor(daemon("baton-confirmer"));
        this.session = new SessionWatch(this, renewer);
        this.renewal = new Renewal(this, session, confirmer);
        if (backend instanceof NotifiesReleases notifying) {
            notifying.listen(new ReleaseListener() {
                @Override
                public void released(String name) {
                    wakeBoard.signal(name);
                }

                @Override
                public void released(String name, String owner) {
                    wakeBoard.signal(name, owner);
                }

                @Override
                public void resynchronize() {
                    wakeBoard.signalAll();
                }
            });
        }
        if (backend instanceof ReportsSessionState reporting) {
            reporting.watchSession(new ReportsSessionState.Listener() {
                @Override
                public void suspended() {
                    session.onSuspended();
                }

                @Override
                public void resumed() {
                    session.onResumed();
                }

                @Override
                public void sessionLost() {
                    session.onSessionLost();
                }
            });
        }
        backend.start(clientId);
        long renewNanos = settings.renewInterval().toNanos();
        renewer.scheduleWithFixedDelay(() -> neverEnds("lease renewal", renewal::renewAll), renewNanos, renewNanos,
                TimeUnit.NANOSECONDS);
        long checkNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(5),
                Math.min(settings.leaseTime().toNanos() / 20, TimeUnit.MILLISECONDS.toNanos(250)));
        watchdog.scheduleWithFixedDelay(() -> neverEnds("lease watchdog", renewal::expireOverdue), checkNanos,
                checkNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs one pass of a periodic task so that nothing it throws, an {@link Error} too, ends the task: a scheduled
     * executor runs a task that threw never again, which would end renewal or loss detection for good.
     */
    void neverEnds(String what, Runnable pass) {
        try {
            pass.run();
        } catch (Throwable e) {
            log.error("unexpected error in {} on {}; it goes on", what, description, e);
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    private static String newClientId(String prefix) {
        String host = prefix;
        if (host == null) {
            host = HostName.get();
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
        if (!(backend instanceof ReadWriteModes)) {
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

    void checkOpen() {
        if (closed) {
            throw new LockClientClosedException("lock client " + clientId + " on " + description + " is closed");
        }
    }

    boolean isClosed() {
        return closed;
    }

    boolean isHeldByCurrentThread(String name, LockMode mode) {
        return holds.containsKey(new HoldKey(name, mode, Thread.currentThread().getId()));
    }

    /**
     * Acquires {@code name} in {@code mode} for the current thread, waiting as {@code options} say.
     *
     * @return the lease; empty only for {@link AcquireOptions.OnBusy#EMPTY} when the lock stayed busy
     */
    Optional<Lease> acquire(String name, LockMode mode, AcquireOptions options) {
        // When interrupts are deferred (Lock.lock()), the flag is hidden from the backend (a pool refuses to lend a
        // connection to an interrupted thread: HikariCP's "Interrupted during connection acquisition") and set
        // again on return, with any interrupt that arrived meanwhile. A try-once does not wait, so it has nothing
        // to interrupt: like Lock.tryLock() it ignores the flag.
        boolean hideInterrupts = options.interrupts() == AcquireOptions.Interrupts.DEFER || !options.waits();
        Acquisition acquisition = new Acquisition(this, name, mode, options, hideInterrupts && Thread.interrupted());
        LockObserver.Acquisition observed = observer == null ? null : observer.acquireStarted(name, options.waits());
        LockObserver.Outcome outcome = LockObserver.Outcome.ERROR;
        Throwable error = null;
        try {
            Optional<Lease> lease = acquisition.run();
            outcome = lease.isPresent() ? LockObserver.Outcome.GRANTED : LockObserver.Outcome.BUSY;
            return lease;
        } catch (LockTimeoutException e) {
            outcome = LockObserver.Outcome.TIMEOUT;
            error = e;
            throw e;
        } catch (RuntimeException | Error e) {
            error = e;
            throw e;
        } finally {
            if (observed != null) {
                long end = now();
                observer.acquireEnded(observed, outcome, end - acquisition.start,
                        acquisition.firstBusy == null ? 0 : end - acquisition.firstBusy, error);
            }
            if (acquisition.deferredInterrupt) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Records a grant as the current thread's hold (an {@link Acquisition} calls it) and returns its first lease
     * handle.
     */
    Lease grant(HoldKey hk, String owner, AcquireResult.Granted granted, long sent) {
        Hold hold = new Hold(new LeaseKey(hk.name(), owner, granted.token(), hk.mode()), hk.threadId(),
                sent, sent + validityNanos, description, observer);
        holds.put(hk, hold);
        if (observer != null) {
            observer.leaseGranted(hk.name(), granted.token());
        }
        if (session.suspended()) {
            hold.markUncertain(); // granted just before the suspension that SessionWatch.onSuspended() may have missed
        }
        if (closed) {
            // close() may have missed this hold; give it back rather than leak it
            dropHold(hold);
            checkOpen();
        }
        return new LeaseHandle(this, hold);
    }

    /** Drops one hold; on the last one, releases on the backend and wakes local waiters. */
    void dropHold(Hold hold) {
        if (hold.state() == Hold.State.HELD && now() - hold.deadlineNanos() >= 0 && !renewal.settleOverdue(hold)) {
            // past its deadline before the watchdog looked: lost all the same, and its listeners run once
            hold.markLost(renewal.deadlineReason(), LockObserver.LossCause.DEADLINE, null);
        }
        Hold.State before = hold.dropHold(); // the state it left, in one step with the move to RELEASED
        if (before == null) {
            return;
        }
        if (observer != null) {
            observer.leaseReleased(hold.key.name(), now() - hold.grantedNanos, before != Hold.State.HELD);
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
            if (!(backend instanceof AnnouncesTurns)) {
                wakeBoard.signal(hold.key.name()); // else the server announces the next waiter, here or elsewhere
            }
        }
    }

    /** See {@link SessionWatch#confirm}: {@code checkValid()} and a re-entry into an uncertain lease ask here. */
    boolean confirm(Hold hold) {
        return session.confirm(hold);
    }

    /** See {@link Renewal#settleOverdue}: {@code checkValid()}, a re-entry and the release ask here. */
    boolean settleOverdue(Hold hold) {
        return renewal.settleOverdue(hold);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        renewer.shutdownNow();
        watchdog.shutdownNow();
        confirmer.shutdownNow();
        Map<HoldKey, Hold> snapshot = new HashMap<>(holds);
        holds.clear();
        for (Hold h : snapshot.values()) {
            boolean wasHeld = h.state() == Hold.State.HELD;
            h.markLost("the lock client was closed while the lease was held", LockObserver.LossCause.CLIENT_CLOSED,
                    null);
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
        return acquire(name, mode, AcquireOptions.tryOnce());
    }
}
