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
import dev.baton.LockObserver;
import dev.baton.LockTimeoutException;
import dev.baton.NothingGrantedException;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.AnnouncesTurns;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.ClearsLostGrants;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.LockBackend;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsSessionState;
import dev.baton.spi.ReportsTimeLeft;
import dev.baton.spi.WaitingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The backend-independent client: reentrancy, waiting, batched renewal and lost-lease detection over a
 * {@link LockBackend}.
 *
 * <p>An acquisition is the wait loop of {@link Acquisition}, written once over the backend's capabilities
 * ({@link BlockingWait}, {@link WaitingQueue}, {@link NotifiesReleases}, {@link ReadWriteModes}) as numbered steps.
 * Renewal: one thread renews every held lease in one backend call per interval; a grant the server no
 * longer shows as ours is lost at once. A separate watchdog thread marks leases lost when their
 * conservative deadline passes, so a renewal stuck in the network cannot delay the loss notice.
 *
 * <p>The deadline: the monotonic time the grant's (or last renewal's) request was <em>sent</em> + the lease time
 * less a clock drift margin ({@link ClientSettings#localValidity()}, as Redlock's validity time), so a lease turns
 * invalid here before the server frees it even if the server's clock runs somewhat fast. A stepped server clock no
 * margin covers: over a {@link ReportsTimeLeft} backend each renewal also checks that the server still had at least
 * until the deadline left on the grant, else the lease is lost at once (see {@link #renewAll}).
 *
 * <p>A passed deadline over a backend that {@link ConfirmsGrants confirms grants}: if no renewal of the lease failed
 * (this process was paused, by a long GC or a stopped container, or a renewal is late), the passed deadline is only
 * uncertain: the lease is not valid, and it is renewed once more, on a thread of its own, before anything calls it
 * lost (the leases one watchdog pass finds overdue are renewed together, in one call). Renewed (the server still
 * showed the grant, owner and token, and extended it): valid again. Not renewed, or the server could not be asked
 * (unless a regular renewal extended the lease meanwhile), or no answer within half the lease time (at least 250 ms,
 * at most 1 s): lost. A lease whose renewal failed is lost at its deadline, as over every other backend.
 *
 * <p>Over a backend that {@link ReportsSessionState reports its session's state}: a suspended session makes every
 * held lease uncertain (not valid, not lost, its deadline still running); a resumed one has each uncertain lease
 * confirmed on the renewer thread (valid again, or lost); a lost session loses every lease once.
 */
public final class CoreLockClient implements LockClient {
    private static final Logger log = LoggerFactory.getLogger(CoreLockClient.class);
    /** Longest single server-side blocking wait, so interruption and close are noticed between slices. */
    private static final long BLOCKING_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** How often an acquisition without a deadline, refused again and again, says so at WARN. */
    static final long REFUSAL_WARN_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final LockBackend backend;
    private final ClientSettings settings;
    private final String clientId;
    private final String description;
    private final WakeBoard wakeBoard = new WakeBoard();
    /** Holds by (name, thread). Only the owning thread adds a hold; any thread may drop one. */
    private final ConcurrentHashMap<HoldKey, Hold> holds = new ConcurrentHashMap<>();
    private final ScheduledExecutorService renewer;
    private final ScheduledExecutorService watchdog;
    /** Renews leases whose deadline passed without a failed renewal (see the class comment). */
    private final java.util.concurrent.ExecutorService confirmer;
    /** How long such a renewal may take before the lease is lost all the same. */
    private final long overdueBoundNanos;
    /** How long a grant or renewal keeps a lease valid after its request was sent: lease time less drift margin. */
    private final long validityNanos;
    private volatile boolean closed;
    /** The backend's session is suspended ({@link ReportsSessionState}): new grants start uncertain. */
    private volatile boolean suspended;
    /** How many suspensions the backend reported: a confirmation makes a lease certain only within one. */
    private final AtomicLong suspensions = new AtomicLong();
    /** The settings' observer behind a guard, or null without one: then no observer call is made at all. */
    private final GuardedObserver observer;

    /**
     * The key of a thread's hold on a lock. Its {@code equals} and {@code hashCode} are written out: a record's
     * generated ones are linked by {@code invokedynamic} on first use, which spins method-handle classes at run
     * time on every start of a short-lived process ({@code baton run}).
     */
    private record HoldKey(String name, LockMode mode, long threadId) {
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
        this.overdueBoundNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(250),
                Math.min(settings.leaseTime().toNanos() / 2, TimeUnit.SECONDS.toNanos(1)));
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
                    onSuspended();
                }

                @Override
                public void resumed() {
                    onResumed();
                }

                @Override
                public void sessionLost() {
                    onSessionLost();
                }
            });
        }
        backend.start(clientId);
        long renewNanos = settings.renewInterval().toNanos();
        renewer.scheduleWithFixedDelay(() -> neverEnds("lease renewal", this::renewAll), renewNanos, renewNanos,
                TimeUnit.NANOSECONDS);
        long checkNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(5),
                Math.min(settings.leaseTime().toNanos() / 20, TimeUnit.MILLISECONDS.toNanos(250)));
        watchdog.scheduleWithFixedDelay(() -> neverEnds("lease watchdog", this::expireOverdue), checkNanos,
                checkNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs one pass of a periodic task so that nothing it throws, an {@link Error} too, ends the task: a scheduled
     * executor runs a task that threw never again, which would end renewal or loss detection for good.
     */
    private void neverEnds(String what, Runnable pass) {
        try {
            pass.run();
        } catch (Throwable e) {
            log.error("unexpected error in {} on {}; it goes on", what, description, e);
        }
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

    private void checkOpen() {
        if (closed) {
            throw new LockClientClosedException("lock client " + clientId + " on " + description + " is closed");
        }
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
        Acquisition acquisition = new Acquisition(name, mode, options, hideInterrupts && Thread.interrupted());
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
     * One acquisition by the current thread: the core's wait loop, written once over the backend's capabilities.
     * <ol>
     *   <li>Re-entry: if this thread already holds the lock in this mode, add a hold and return (no round trip);
     *       refuse if that lease was lost. Refuse the other side of a read-write lock this thread holds.</li>
     *   <li>Register as a waiter on the wake board, so a release from now on (in this client, or heard from the
     *       server by a {@link NotifiesReleases} backend) leaves a wake-up behind.</li>
     *   <li>Try once on the backend. Granted: record the hold with deadline = send time + lease time.</li>
     *   <li>Busy and the caller's deadline has passed (a try-once's at once): give up — empty or
     *       {@link LockTimeoutException}.</li>
     *   <li>A {@link BlockingWait} backend waits on the server for one slice (at most 500 ms or the time left).
     *       Granted: record the hold. Busy: back to step 3. Not now: step 6.</li>
     *   <li>Park until a wake-up, just after the holder's lease ends on the server, the current backoff (doubling
     *       from minPollInterval to maxPollInterval, with jitter), the backend's {@link AcquireResult.Busy#nextTry}
     *       hint (when to look again, for a waiter the server will not wake), or the deadline, whichever comes first. Back to step 3.</li>
     * </ol>
     * An attempt (step 3 or 5) that failed with a {@link NothingGrantedException} (nothing was granted, for sure) is
     * tried again after the backoff until the deadline; any other failure ends the acquisition.
     * Between steps the loop checks that the client is open and, unless interrupts are deferred, the interrupt
     * flag. Whenever it ends without a grant after a busy answer — timeout, interruption, closing, a failure — a
     * {@link WaitingQueue} backend is told to withdraw the waiter's place (closing: the backend's close does it).
     */
    private final class Acquisition {
        private final String name;
        private final LockMode mode;
        private final AcquireOptions options;
        private final boolean interruptible;
        private final HoldKey holdKey;
        private final long start = now();
        private final long minPoll = settings.minPollInterval().toNanos();
        private final long maxPoll = settings.maxPollInterval().toNanos();
        private long backoff = minPoll;
        private AcquireResult.Busy lastBusy;
        private AcquireRequest request;
        /** When the first answer said the lock was busy (for the observer), or null. */
        Long firstBusy;
        /** Set when an interrupt arrived while interrupts are deferred; the caller sets the flag again on return. */
        boolean deferredInterrupt;
        /** When a refusal was last logged at WARN (an acquisition without a deadline), or null. */
        private Long refusalWarned;

        Acquisition(String name, LockMode mode, AcquireOptions options, boolean interruptedBefore) {
            this.name = name;
            this.mode = mode;
            this.options = options;
            this.interruptible = options.interrupts() == AcquireOptions.Interrupts.END_THE_WAIT && options.waits();
            this.holdKey = new HoldKey(name, mode, Thread.currentThread().getId());
            this.deferredInterrupt = interruptedBefore;
        }

        Optional<Lease> run() {
            checkOpen();
            Lease reentered = reenter();                                          // step 1
            if (reentered != null) {
                return Optional.of(reentered);
            }
            refuseTheOtherSide();
            request = new AcquireRequest(name, mode, clientId + "#" + holdKey.threadId(), settings.leaseTime(),
                    options.waits() ? AcquireRequest.Patience.WAIT : AcquireRequest.Patience.TRY_ONCE);
            WakeBoard.Waiter waiter = wakeBoard.register(name, request.owner()); // step 2
            boolean granted = false;
            try {
                while (true) {
                    checkOpen();
                    checkInterrupt();
                    waiter.drain();
                    long sent = now();
                    AcquireResult result;
                    try {
                        result = backend.tryAcquire(request);                      // step 3
                    } catch (NothingGrantedException e) {
                        waitAfterRefusal(waiter, e);
                        continue;
                    }
                    if (result instanceof AcquireResult.Granted grant) {
                        granted = true;
                        return Optional.of(grant(holdKey, request.owner(), grant, sent));
                    }
                    lastBusy = (AcquireResult.Busy) result;
                    if (firstBusy == null && observer != null) {
                        firstBusy = now();
                    }
                    long left = timeLeft();
                    if (left <= 0) {                                               // step 4
                        if (options.onBusy() == AcquireOptions.OnBusy.EMPTY) {
                            return Optional.empty();
                        }
                        throw timeout(name, now() - start, lastBusy);
                    }
                    if (backend instanceof BlockingWait blocking) {                // step 5
                        sent = now();
                        BlockingWait.Outcome outcome;
                        try {
                            outcome = blocking.awaitGrant(request, Duration.ofNanos(Math.min(left, BLOCKING_SLICE_NANOS)));
                        } catch (NothingGrantedException e) {
                            waitAfterRefusal(waiter, e);
                            continue;
                        }
                        if (outcome instanceof BlockingWait.Outcome.Decided decided) {
                            if (decided.result() instanceof AcquireResult.Granted grant) {
                                granted = true;
                                return Optional.of(grant(holdKey, request.owner(), grant, sent));
                            }
                            lastBusy = (AcquireResult.Busy) decided.result();
                            backoff = minPoll;
                            continue;
                        }
                    }
                    park(waiter, left);                                            // step 6
                }
            } finally {
                wakeBoard.unregister(waiter);
                if (!granted) {
                    withdraw();
                }
            }
        }

        /** Step 1: a re-entrant hold, or null to acquire afresh. */
        private Lease reenter() {
            Hold existing = holds.get(holdKey);
            if (existing == null) {
                return null;
            }
            if (existing.isUncertain()) {
                confirm(existing); // its session was suspended: ask the server before adding a hold
            }
            settleOverdue(existing);
            LockLostException invalid = existing.invalidReason(now());
            if (invalid == null && existing.tryAddHold()) {
                return new LeaseHandle(CoreLockClient.this, existing);
            }
            if (existing.state() != Hold.State.RELEASED) {
                // lost, or past its deadline: a re-entrant hold on it would not be held
                throw invalid != null ? invalid : existing.invalidReason(now());
            }
            // released by another thread a moment ago: acquire afresh
            holds.remove(holdKey, existing);
            return null;
        }

        private void refuseTheOtherSide() {
            if (mode == LockMode.EXCLUSIVE) {
                return;
            }
            LockMode other = mode == LockMode.READ ? LockMode.WRITE : LockMode.READ;
            if (holds.containsKey(new HoldKey(name, other, holdKey.threadId()))) {
                throw new IllegalStateException("thread " + Thread.currentThread().getName() + " holds the "
                        + other.name().toLowerCase() + " side of read-write lock '" + name + "' and asks for the "
                        + mode.name().toLowerCase() + " side: it would wait for itself (no upgrade or downgrade);"
                        + " close the other side first");
            }
        }

        private void checkInterrupt() {
            if (interruptible && Thread.interrupted()) {
                throw interrupted(name, start);
            }
        }

        private long timeLeft() {
            return options.forever() ? Long.MAX_VALUE : options.maxWaitNanos() - (now() - start);
        }

        /**
         * An attempt failed but certainly granted nothing (not sent while disconnected, refused before any write): a
         * waiting acquire tries again after its backoff (or a wake-up, such as the backend's reconnect) until its
         * deadline, and throws the error only when no time is left; a try-once throws it at once. An error whose
         * outcome is unknown is never retried here: it ends the acquisition as before.
         */
        private void waitAfterRefusal(WakeBoard.Waiter waiter, NothingGrantedException e) {
            long left = timeLeft();
            if (!options.waits() || left <= 0) {
                throw e;
            }
            if (options.forever()) {
                // no deadline ends this wait with the error: say at WARN that it keeps being refused, now and then
                long t = now();
                if (refusalWarned == null || t - refusalWarned >= REFUSAL_WARN_NANOS) {
                    log.warn("acquire of lock '{}' on {} granted nothing ({}); waiting without a deadline, it tries"
                            + " again until the backend grants it", name, description, e.getMessage());
                    refusalWarned = t;
                } else {
                    log.debug("acquire of '{}' granted nothing ({}); trying again", name, e.getMessage());
                }
            } else {
                log.debug("acquire of '{}' granted nothing ({}); trying again until the wait's deadline", name,
                        e.getMessage());
            }
            long jittered = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
            backoff = Math.min(backoff * 2, maxPoll);
            try {
                waiter.await(Math.min(jittered, left), interruptible);
            } catch (InterruptedException ie) {
                throw interrupted(name, start);
            }
            if (!interruptible && Thread.interrupted()) {
                deferredInterrupt = true;
            }
        }

        /** Step 6. */
        private void park(WakeBoard.Waiter waiter, long left) {
            if (backend instanceof AnnouncesTurns) {
                backoff = maxPoll; // the server announces this waiter's turn: the poll is only a safety net
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
            if (lastBusy.nextTry() != null) {
                // the backend keeps this waiter's place in line and says when to look again (no server wake-up)
                park = Math.min(park, Math.max(0, CoreLock.saturatedNanos(lastBusy.nextTry())));
            }
            backoff = Math.min(backoff * 2, maxPoll);
            try {
                waiter.await(park, interruptible);
            } catch (InterruptedException e) {
                throw interrupted(name, start);
            }
            if (!interruptible && Thread.interrupted()) {
                deferredInterrupt = true; // hidden from the next backend call, set again on return
            }
        }

        /** The waiter leaves without a grant: a backend that keeps places in line withdraws this one. */
        private void withdraw() {
            if (request == null || !(backend instanceof WaitingQueue queue) || closed) {
                return; // a closing client's backend withdraws every place in its close()
            }
            // like a release, a withdrawal on an interrupted thread must still reach the server
            boolean interruptedNow = Thread.interrupted();
            try {
                queue.withdraw(request);
            } catch (RuntimeException e) {
                log.debug("withdrawing the place of '{}' in line failed; it ends on the server with its lease",
                        name, e);
            } finally {
                if (interruptedNow) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private Lease grant(HoldKey hk, String owner, AcquireResult.Granted granted, long sent) {
        Hold hold = new Hold(new LeaseKey(hk.name(), owner, granted.token(), hk.mode()), hk.threadId(),
                sent, sent + validityNanos, description, observer);
        holds.put(hk, hold);
        if (observer != null) {
            observer.leaseGranted(hk.name(), granted.token());
        }
        if (suspended) {
            hold.markUncertain(); // granted just before the suspension that onSuspended() may have missed
        }
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
        if (hold.state() == Hold.State.HELD && now() - hold.deadlineNanos() >= 0 && !settleOverdue(hold)) {
            // past its deadline before the watchdog looked: lost all the same, and its listeners run once
            hold.markLost(deadlineReason(), LockObserver.LossCause.DEADLINE, null);
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
            // the deadlines this round's time-left check is about: a renewal of an overdue lease may extend one
            // while this round is under way, after its time left was read on the server
            long[] deadlinesAtSend = new long[batch.size()];
            for (int i = 0; i < deadlinesAtSend.length; i++) {
                deadlinesAtSend[i] = batch.get(i).deadlineNanos();
            }
            long sent = now();
            Set<LeaseKey> renewed;
            Map<LeaseKey, Duration> timeLeft = null;
            try {
                if (backend instanceof ReportsTimeLeft reporting) {
                    timeLeft = reporting.renewReportingTimeLeft(keys, settings.leaseTime());
                    renewed = timeLeft.keySet();
                } else {
                    renewed = backend.renew(keys, settings.leaseTime());
                }
            } catch (LockBackendException e) {
                log.warn("renewal of {} lease(s) failed on {}: {}", keys.size(), description, e.getMessage());
                batch.forEach(h -> h.renewalFailed(true));
                if (observer != null) {
                    observer.renewed(0, keys.size(), now() - sent);
                }
                return;
            }
            batch.forEach(h -> h.renewalFailed(false));
            long received = now();
            long deadline = sent + validityNanos;
            int ok = 0;
            for (int i = 0; i < batch.size(); i++) {
                Hold h = batch.get(i);
                String stepped = timeLeft == null ? null
                        : steppedClock(h, timeLeft.get(h.key), received, deadlinesAtSend[i]);
                if (stepped == null && renewed.contains(h.key)) {
                    ok++;
                }
                if (stepped != null) {
                    // renewed on the server, but its grant had less time left there than this client counted on:
                    // the server may end grants before their local deadlines, so this one is not trusted any more.
                    // The server would keep it for a whole lease, held by nobody: a backend that clears lost grants
                    // does so now (else it ends there with its lease, or when the lease is closed).
                    if (h.markLost(stepped, LockObserver.LossCause.CLOCK_JUMP, null)) {
                        clearLost(h);
                    }
                } else if (renewed.contains(h.key)) {
                    h.extendDeadline(deadline);
                } else if (h.state() == Hold.State.HELD) {
                    // the server said it no longer shows the grant; an answer that came after the deadline says the
                    // lease had lapsed here first (isValid() was false), and the server's answer is still the cause
                    boolean lapsed = now() - h.deadlineNanos() >= 0;
                    if (h.markLost(lapsed ? deadlineReason() + ", and the renewal's late answer showed that the"
                                    + " server no longer has the grant"
                                    : "the server no longer shows this grant (it expired there or was taken over)",
                            LockObserver.LossCause.NOT_ON_SERVER, null) && lapsed) {
                        clearLost(h);
                    }
                }
            }
            if (observer != null) {
                observer.renewed(ok, batch.size() - ok, received - sent);
            }
        } catch (RuntimeException e) {
            log.error("unexpected error in lease renewal on {}", description, e);
        } finally {
            confirmUncertain();
        }
    }

    /**
     * The renewal check of a {@link ReportsTimeLeft} backend: the script that renewed the grant ran at some moment
     * before {@code received} and found {@code left} on it, so the server would have ended it by
     * {@code received + left}. That must not come before the lease's local deadline, which by construction (send
     * time + lease time - drift) a healthy server never undercuts: the server's expiry is at least the renewal's send
     * time + lease time, and the drift margin's 2 ms cover the server's millisecond rounding. If it does come before,
     * the server's clock jumped forward by about the difference (or the grant's expiry was changed on the server),
     * and {@code isValid()} was true while the server could already have freed the lock. Returns the loss's reason
     * then, else null.
     *
     * <p>The deadline compared is {@code deadlineAtSend}, the one the client counted on when this renewal was sent,
     * not the lease's deadline now: a renewal of the overdue lease may have extended it meanwhile, after this
     * renewal had read the time left on the server.
     */
    private String steppedClock(Hold h, Duration left, long received, long deadlineAtSend) {
        if (left == null || h.state() != Hold.State.HELD) {
            return null;
        }
        long counted = deadlineAtSend - received;
        long shortBy = counted - CoreLock.saturatedNanos(left);
        if (shortBy <= 0) {
            return null;
        }
        return "the renewal found " + left.toMillis() + " ms left on the grant on the server, " + millis(shortBy)
                + " ms less than this client counted on (" + millis(Math.max(0, counted)) + " ms until its local"
                + " deadline): the server's clock jumped forward or the grant's expiry was changed there, so the"
                + " server may end grants before their deadlines";
    }

    // ---- session state (ReportsSessionState backends only) -------------------------------------------------

    private void onSuspended() {
        suspensions.incrementAndGet();
        suspended = true;
        int n = 0;
        for (Hold h : holds.values()) {
            if (h.state() == Hold.State.HELD) {
                h.markUncertain();
                n++;
            }
        }
        if (n > 0) {
            log.warn("the session of {} is suspended: {} lease(s) uncertain (not valid) until confirmed", description, n);
        }
    }

    private void onResumed() {
        suspended = false;
        try {
            renewer.execute(this::confirmUncertain);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void onSessionLost() {
        suspended = false; // that session is over: nothing on it is uncertain any more
        for (Hold h : holds.values()) {
            h.markLost("its server session ended (expired)", LockObserver.LossCause.SESSION_LOST, null);
        }
    }

    /**
     * Asks the server about each uncertain lease while the session is not suspended: confirmed, valid again; not
     * shown, lost. A failure leaves it uncertain until the next renewal round or its deadline. Renewer thread.
     */
    private void confirmUncertain() {
        if (suspended || !(backend instanceof ReportsSessionState)) {
            return;
        }
        for (Hold h : holds.values()) {
            if (!h.isUncertain()) {
                continue;
            }
            try {
                confirm(h);
            } catch (LockBackendException e) {
                log.debug("confirming uncertain lease '{}' failed; it stays uncertain", h.key.name(), e);
            } catch (RuntimeException e) {
                log.error("unexpected error confirming lease '{}' on {}", h.key.name(), description, e);
            }
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
        long epoch = suspensions.get();
        long sent = now();
        boolean wasUncertain = hold.isUncertain();
        if (confirming.confirm(hold.key)) {
            if (wasUncertain && !suspended && suspensions.get() == epoch) {
                // shown by the server on a session that was not suspended since: as good as a renewal
                hold.extendDeadline(sent + validityNanos);
                hold.markCertain();
                if (suspended || suspensions.get() != epoch) {
                    hold.markUncertain(); // a suspension that came between the check and markCertain() wins
                }
            }
            return true;
        }
        hold.markLost(wasUncertain ? "the server no longer shows this grant after its session was suspended"
                : "the server no longer shows this grant (checked by checkValid)", LockObserver.LossCause.NOT_ON_SERVER,
                null);
        return false;
    }

    /** Why a lease whose local deadline passed is lost, whoever noticed: the watchdog, a release or a renewal. */
    private String deadlineReason() {
        return "no successful renewal before its deadline (lease time " + settings.leaseTime().toMillis() + " ms)";
    }

    /**
     * Marks leases lost once their conservative deadline has passed; those whose renewals did not fail are renewed
     * once first, on the confirmer thread, and lost only if that does not renew them in time. The leases a pass finds
     * newly overdue are renewed together, in one backend call (after a pause, every held lease is overdue at once:
     * one round trip each would run the bound out for the last ones), and the bound counts from that pass. Runs on
     * the watchdog thread.
     */
    private void expireOverdue() {
        List<Hold> newlyOverdue = new ArrayList<>();
        try {
            long now = now();
            for (Hold h : holds.values()) {
                if (h.state() != Hold.State.HELD || now - h.deadlineNanos() < 0) {
                    continue;
                }
                String reason = deadlineReason();
                if (reconfirms(h)) {
                    if (h.startOverdue(now)) {
                        newlyOverdue.add(h);
                        continue;
                    }
                    if (!h.overdueLongerThan(overdueBoundNanos, now)) {
                        continue; // the renewal is under way
                    }
                    reason = "its local deadline passed and the server did not renew it within "
                            + millis(overdueBoundNanos) + " ms (lease time " + settings.leaseTime().toMillis() + " ms)";
                }
                if (h.markLost(reason, LockObserver.LossCause.DEADLINE, null)) {
                    clearLost(h);
                }
            }
        } finally {
            if (!newlyOverdue.isEmpty()) {
                try {
                    confirmer.execute(() -> neverEnds("renewal of overdue leases", () -> renewOverdue(newlyOverdue)));
                } catch (RejectedExecutionException e) {
                    // closing
                }
            }
        }
    }

    /**
     * Whether a lease whose local deadline passed is renewed once before it is called lost: over a backend that
     * {@link ConfirmsGrants}, when no renewal of it failed (so the deadline passed because this process did not run,
     * or a renewal is late, not because the server could not be reached or refused).
     */
    private boolean reconfirms(Hold h) {
        return backend instanceof ConfirmsGrants && !h.renewalFailed();
    }

    /**
     * If {@code h} is HELD past its local deadline and {@link #reconfirms} it, renews it now, in this thread (a
     * caller about to rely on it: {@code checkValid()}, a re-entry, the release). Returns whether it did.
     */
    boolean settleOverdue(Hold h) {
        if (h.state() != Hold.State.HELD || now() - h.deadlineNanos() < 0 || !reconfirms(h)) {
            return false;
        }
        h.startOverdue(now());
        renewOverdue(List.of(h));
        return true;
    }

    /**
     * Renews leases whose local deadline passed though no renewal of them failed, in one backend call (as
     * {@link #renewAll} does). Renewed by the server (owner and token still there, unexpired by its clock, now
     * extended): valid again until send time + validity. Not shown by the server: lost. The call failed: lost (nothing
     * proves the grant), unless a regular renewal answered meanwhile and extended the lease past now: then it is
     * simply valid again. A renewal that comes back after the watchdog gave up on a lease clears the grant again, as
     * the release of a lost lease does.
     */
    private void renewOverdue(List<Hold> overdue) {
        List<Hold> batch = new ArrayList<>(overdue.size());
        for (Hold h : overdue) {
            if (h.state() == Hold.State.HELD) {
                batch.add(h);
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        List<LeaseKey> keys = new ArrayList<>(batch.size());
        batch.forEach(h -> keys.add(h.key));
        boolean interrupted = Thread.interrupted(); // on a user's thread: a pool refuses an interrupted borrower
        try {
            long sent = now();
            Set<LeaseKey> renewed;
            try {
                renewed = backend.renew(keys, settings.leaseTime());
                if (backend instanceof ConfirmsGrants confirming && !confirming.renewalAsksTheServer()) {
                    // a renewal that may answer without the server (a busy session): only the server's answer counts
                    Set<LeaseKey> confirmed = new HashSet<>();
                    for (LeaseKey key : renewed) {
                        if (confirming.confirm(key)) {
                            confirmed.add(key);
                        }
                    }
                    renewed = confirmed;
                }
            } catch (LockBackendException e) {
                for (Hold h : batch) {
                    if (now() - h.deadlineNanos() < 0) {
                        h.endOverdue(); // a regular renewal answered meanwhile: valid again by that one
                    } else if (h.markLost(deadlineReason() + ", and renewing it then failed: " + e.getMessage(),
                            LockObserver.LossCause.DEADLINE, e)) {
                        clearLost(h);
                    }
                }
                return;
            }
            for (Hold h : batch) {
                if (!renewed.contains(h.key)) {
                    h.markLost("its local deadline passed (this process was paused, or its renewal was late) and"
                            + " the server no longer shows the grant", LockObserver.LossCause.NOT_ON_SERVER, null);
                    continue;
                }
                h.extendDeadline(sent + validityNanos);
                if (now() - h.deadlineNanos() < 0) {
                    h.endOverdue();
                }
                if (h.state() == Hold.State.LOST) {
                    try {
                        backend.release(h.key); // lost meanwhile (the watchdog gave up on this renewal): clear again
                    } catch (RuntimeException e) {
                        log.debug("clearing lost lease '{}' after a late renewal failed", h.key.name(), e);
                    }
                }
            }
        } catch (RuntimeException e) {
            log.error("unexpected error renewing {} overdue lease(s) on {}", batch.size(), description, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A lease lost by its deadline: a backend whose server may keep the grant longer clears it now. */
    private void clearLost(Hold h) {
        if (backend instanceof ClearsLostGrants clearing) {
            try {
                clearing.lost(h.key);
            } catch (RuntimeException e) {
                log.warn("clearing lost lease '{}' (token {}) on {} failed; it is cleared when the lease is closed",
                        h.key.name(), h.key.token(), description, e);
            }
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
