package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockInterruptedException;
import dev.baton.LockLostException;
import dev.baton.LockTimeoutException;
import dev.baton.NothingGrantedException;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.AnnouncesTurns;
import dev.baton.spi.BlockingWait;
import dev.baton.spi.Causes;
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.WaitingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One acquisition by the current thread: the core's wait loop, written once over the backend's capabilities.
 * It owns only its own wait (the request, the backoff, the last busy answer); the holds it adds belong to the
 * {@link CoreLockClient}, which records a grant ({@link CoreLockClient#grant}) and tells the observer how the
 * acquisition ended.
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
 *       hint (when to look again, for a waiter the server will not wake), or the deadline, whichever comes first.
 *       Back to step 3.</li>
 * </ol>
 * An attempt (step 3 or 5) that failed with a {@link NothingGrantedException} (nothing was granted, for sure) is
 * tried again after the backoff until the deadline; any other failure ends the acquisition.
 * Between steps the loop checks that the client is open and, unless interrupts are deferred, the interrupt
 * flag. Whenever it ends without a grant after a busy answer — timeout, interruption, closing, a failure — a
 * {@link WaitingQueue} backend is told to withdraw the waiter's place (closing: the backend's close does it).
 *
 * <p>Used by one thread only, the acquiring one. It logs under the client's logger name.
 */
final class Acquisition {
    private static final Logger log = LoggerFactory.getLogger(CoreLockClient.class);
    /** Longest single server-side blocking wait, so interruption and close are noticed between slices. */
    private static final long BLOCKING_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** How often an acquisition without a deadline, refused again and again, says so at WARN. */
    static final long REFUSAL_WARN_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final CoreLockClient client;
    private final String name;
    private final LockMode mode;
    private final AcquireOptions options;
    private final boolean interruptible;
    private final CoreLockClient.HoldKey holdKey;
    /** When the acquisition started (the client's ticker), for the observer and the messages. */
    final long start;
    private final long minPoll;
    private final long maxPoll;
    private long backoff;
    private AcquireResult.Busy lastBusy;
    private AcquireRequest request;
    /** When the first answer said the lock was busy (for the observer), or null. */
    Long firstBusy;
    /** Set when an interrupt arrived while interrupts are deferred; the caller sets the flag again on return. */
    boolean deferredInterrupt;
    /** When a refusal was last logged at WARN (an acquisition without a deadline), or null. */
    private Long refusalWarned;

    Acquisition(CoreLockClient client, String name, LockMode mode, AcquireOptions options,
                boolean interruptedBefore) {
        this.client = client;
        this.start = client.now();
        this.minPoll = client.settings.minPollInterval().toNanos();
        this.maxPoll = client.settings.maxPollInterval().toNanos();
        this.backoff = minPoll;
        this.name = name;
        this.mode = mode;
        this.options = options;
        this.interruptible = options.interrupts() == AcquireOptions.Interrupts.END_THE_WAIT && options.waits();
        this.holdKey = new CoreLockClient.HoldKey(name, mode, Thread.currentThread().getId());
        this.deferredInterrupt = interruptedBefore;
    }

    Optional<Lease> run() {
        client.checkOpen();
        Lease reentered = reenter();                                          // step 1
        if (reentered != null) {
            return Optional.of(reentered);
        }
        refuseTheOtherSide();
        request = new AcquireRequest(name, mode, client.clientId + "#" + holdKey.threadId(),
                client.settings.leaseTime(),
                options.waits() ? AcquireRequest.Patience.WAIT : AcquireRequest.Patience.TRY_ONCE);
        WakeBoard.Waiter waiter = client.wakeBoard.register(name, request.owner()); // step 2
        boolean granted = false;
        try {
            while (true) {
                client.checkOpen();
                checkInterrupt();
                waiter.drain();
                long sent = client.now();
                AcquireResult result;
                try {
                    result = client.backend.tryAcquire(request);                  // step 3
                } catch (NothingGrantedException e) {
                    waitAfterRefusal(waiter, e);
                    continue;
                }
                if (result instanceof AcquireResult.Granted grant) {
                    granted = true;
                    return Optional.of(client.grant(holdKey, request.owner(), grant, sent));
                }
                lastBusy = (AcquireResult.Busy) result;
                if (firstBusy == null && client.observer != null) {
                    firstBusy = client.now();
                }
                long left = timeLeft();
                if (left <= 0) {                                                   // step 4
                    if (options.onBusy() == AcquireOptions.OnBusy.EMPTY) {
                        return Optional.empty();
                    }
                    throw timeout(client.now() - start, lastBusy);
                }
                if (client.backend instanceof BlockingWait blocking) {            // step 5
                    sent = client.now();
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
                            return Optional.of(client.grant(holdKey, request.owner(), grant, sent));
                        }
                        lastBusy = (AcquireResult.Busy) decided.result();
                        backoff = minPoll;
                        continue;
                    }
                }
                park(waiter, left);                                                // step 6
            }
        } finally {
            client.wakeBoard.unregister(waiter);
            if (!granted) {
                withdraw();
            }
        }
    }

    /** Step 1: a re-entrant hold, or null to acquire afresh. */
    private Lease reenter() {
        Hold existing = client.holds.get(holdKey);
        if (existing == null) {
            return null;
        }
        if (existing.isUncertain()) {
            client.confirm(existing); // its session was suspended: ask the server before adding a hold
        }
        client.settleOverdue(existing);
        LockLostException invalid = existing.invalidReason(client.now());
        if (invalid == null && existing.tryAddHold()) {
            return new LeaseHandle(client, existing);
        }
        if (existing.state() != Hold.State.RELEASED) {
            // lost, or past its deadline: a re-entrant hold on it would not be held
            throw invalid != null ? invalid : existing.invalidReason(client.now());
        }
        // released by another thread a moment ago: acquire afresh
        client.holds.remove(holdKey, existing);
        return null;
    }

    private void refuseTheOtherSide() {
        if (mode == LockMode.EXCLUSIVE) {
            return;
        }
        LockMode other = mode == LockMode.READ ? LockMode.WRITE : LockMode.READ;
        if (client.holds.containsKey(new CoreLockClient.HoldKey(name, other, holdKey.threadId()))) {
            throw new IllegalStateException("thread " + Thread.currentThread().getName() + " holds the "
                    + other.name().toLowerCase() + " side of read-write lock '" + name + "' and asks for the "
                    + mode.name().toLowerCase() + " side: it would wait for itself (no upgrade or downgrade);"
                    + " close the other side first");
        }
    }

    /**
     * Whether the refusal was the thread's own interrupt (a pool that gave up borrowing a connection): nothing the
     * operator must hear of when interrupts are deferred, as {@code lock()}'s are.
     */
    private static boolean byInterrupt(NothingGrantedException e) {
        return Causes.find(e.getCause(), InterruptedException.class).isPresent();
    }

    private void checkInterrupt() {
        if (interruptible && Thread.interrupted()) {
            throw interrupted();
        }
    }

    private long timeLeft() {
        return options.forever() ? Long.MAX_VALUE : options.maxWaitNanos() - (client.now() - start);
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
            long t = client.now();
            if (!byInterrupt(e) && (refusalWarned == null || t - refusalWarned >= REFUSAL_WARN_NANOS)) {
                log.warn("acquire of lock '{}' on {} granted nothing ({}); waiting without a deadline, it tries"
                        + " again until the backend grants it", name, client.description, e.getMessage());
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
            throw interrupted();
        }
        if (!interruptible && Thread.interrupted()) {
            deferredInterrupt = true;
        }
    }

    /** Step 6. */
    private void park(WakeBoard.Waiter waiter, long left) {
        if (client.backend instanceof AnnouncesTurns) {
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
            throw interrupted();
        }
        if (!interruptible && Thread.interrupted()) {
            deferredInterrupt = true; // hidden from the next backend call, set again on return
        }
    }

    /** The waiter leaves without a grant: a backend that keeps places in line withdraws this one. */
    private void withdraw() {
        if (request == null || !(client.backend instanceof WaitingQueue queue) || client.isClosed()) {
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

    private LockInterruptedException interrupted() {
        Thread.currentThread().interrupt();
        return new LockInterruptedException(name, "interrupted after waiting " + millis(client.now() - start)
                + " ms for lock '" + name + "' on " + client.description);
    }

    private LockTimeoutException timeout(long waitedNanos, AcquireResult.Busy busy) {
        String holder = busy.holder();
        StringBuilder msg = new StringBuilder("lock '").append(name).append("' not acquired within ")
                .append(millis(waitedNanos)).append(" ms on ").append(client.description);
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
}
