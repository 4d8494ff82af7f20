package dev.baton.internal;

import dev.baton.LockLostException;
import dev.baton.LockObserver;
import dev.baton.spi.LeaseKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One grant held by one thread, shared by all of that thread's reentrant holds. State moves only forward:
 * HELD → RELEASED, or HELD → LOST → RELEASED; listeners run on the single move to LOST.
 *
 * <p>A HELD grant may be <em>uncertain</em> while the backend's session is suspended
 * ({@link dev.baton.spi.ReportsSessionState}): not valid, not lost, until a confirmation makes it certain again or
 * it is lost. Only such backends ever make a grant uncertain.
 *
 * <p>The deadline is read by anyone, hence volatile; it is extended by the renewer thread and by a confirmation of
 * an uncertain grant, under the monitor, so it only grows. State changes and listener registration happen under
 * the monitor so a listener added concurrently with the loss runs exactly once.
 */
final class Hold {
    /** Lost leases are logged at WARN under this stable name, so applications can route or silence them. */
    private static final Logger log = LoggerFactory.getLogger("dev.baton.lease-lost");

    enum State { HELD, LOST, RELEASED }

    final LeaseKey key;
    final long threadId;
    final Instant acquiredAt;
    /** The monotonic time the grant's request was sent, for the observer's hold time. */
    final long grantedNanos;
    private final String backend;
    /** Told of the loss, or null for a client without an observer. */
    private final GuardedObserver observer;
    private volatile long deadlineNanos;
    private int holdCount = 1;
    private State state = State.HELD;
    private boolean uncertain;
    /** Past its local deadline with no failed renewal, being confirmed with the server since {@link #overdueSince}. */
    private boolean overdue;
    private long overdueSince;
    /** The last renewal that carried this grant could not reach the server (or refused to answer). */
    private volatile boolean renewalFailed;
    private LockLostException lostReason;
    private final List<Consumer<LockLostException>> listeners = new ArrayList<>();

    Hold(LeaseKey key, long threadId, long grantedNanos, long deadlineNanos, String backend,
         GuardedObserver observer) {
        this.key = key;
        this.threadId = threadId;
        this.grantedNanos = grantedNanos;
        this.deadlineNanos = deadlineNanos;
        this.acquiredAt = Instant.now();
        this.backend = backend;
        this.observer = observer;
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    synchronized void extendDeadline(long newDeadline) {
        if (newDeadline - deadlineNanos > 0) {
            deadlineNanos = newDeadline;
        }
    }

    /**
     * Starts confirming a HELD grant whose local deadline passed although no renewal of it failed (this process
     * was paused, say): returns true for the caller that starts it, false if it is not HELD or already started.
     */
    synchronized boolean startOverdue(long nowNanos) {
        if (state != State.HELD || overdue) {
            return false;
        }
        overdue = true;
        overdueSince = nowNanos;
        return true;
    }

    /** Whether a confirmation of the passed deadline started at or before {@code nowNanos - boundNanos}. */
    synchronized boolean overdueLongerThan(long boundNanos, long nowNanos) {
        return overdue && nowNanos - overdueSince >= boundNanos;
    }

    /** The server renewed the grant after its deadline passed: the new deadline counts again. */
    synchronized void endOverdue() {
        overdue = false;
    }

    boolean renewalFailed() {
        return renewalFailed;
    }

    void renewalFailed(boolean failed) {
        renewalFailed = failed;
    }

    /** A HELD grant becomes uncertain (its session was suspended): not valid, not lost. */
    synchronized void markUncertain() {
        if (state == State.HELD) {
            uncertain = true;
        }
    }

    /** The server confirmed the grant after a suspension: valid again (until its deadline). */
    synchronized void markCertain() {
        uncertain = false;
    }

    /** Whether the grant is HELD but uncertain. */
    synchronized boolean isUncertain() {
        return state == State.HELD && uncertain;
    }

    synchronized State state() {
        return state;
    }

    synchronized int holdCount() {
        return holdCount;
    }

    /** Adds a re-entrant hold if the grant is still HELD; false once it was released or lost. */
    synchronized boolean tryAddHold() {
        if (state != State.HELD) {
            return false;
        }
        holdCount++;
        return true;
    }

    /**
     * Drops one hold. On the last one the grant moves to RELEASED and the state it left is returned (HELD, or LOST),
     * in one step, so a loss that comes at the same moment either happened before (LOST: the release is of a lost
     * lease) or does not happen at all; null while other holds remain.
     */
    synchronized State dropHold() {
        holdCount--;
        if (holdCount > 0) {
            return null;
        }
        State left = state;
        state = State.RELEASED;
        return left;
    }

    boolean isValid(long nowNanos) {
        synchronized (this) {
            if (state != State.HELD || uncertain) {
                return false;
            }
        }
        return nowNanos - deadlineNanos < 0;
    }

    /** The reason the lease is not valid, or null if it is. */
    synchronized LockLostException invalidReason(long nowNanos) {
        if (state == State.LOST) {
            return lostReason;
        }
        if (state == State.RELEASED) {
            return new LockLostException(key.name(), key.token(), "lease on '" + key.name() + "' (token "
                    + key.token() + ") was released");
        }
        if (nowNanos - deadlineNanos >= 0) {
            return new LockLostException(key.name(), key.token(), "lease on '" + key.name() + "' (token "
                    + key.token() + ") passed its deadline without a successful renewal on " + backend);
        }
        return null;
    }

    /**
     * Moves HELD → LOST once, tells the observer ({@code why}) and runs listeners; returns whether this call made
     * the move.
     */
    boolean markLost(String reason, LockObserver.LossCause why, Throwable cause) {
        List<Consumer<LockLostException>> toRun;
        LockLostException ex;
        synchronized (this) {
            if (state != State.HELD) {
                return false;
            }
            state = State.LOST;
            ex = new LockLostException(key.name(), key.token(), "lease on '" + key.name() + "' (token "
                    + key.token() + ", holder " + key.owner() + ") lost: " + reason + " [" + backend + "]", cause);
            lostReason = ex;
            toRun = new ArrayList<>(listeners);
            listeners.clear();
        }
        log.warn(ex.getMessage());
        if (observer != null) {
            observer.leaseLost(key.name(), why, ex);
        }
        toRun.forEach(l -> runListener(l, ex));
        return true;
    }

    void onLost(Consumer<LockLostException> listener) {
        LockLostException ex;
        synchronized (this) {
            if (state != State.LOST) {
                if (state == State.HELD) {
                    listeners.add(listener);
                }
                return;
            }
            ex = lostReason;
        }
        runListener(listener, ex);
    }

    private void runListener(Consumer<LockLostException> l, LockLostException ex) {
        try {
            l.accept(ex);
        } catch (RuntimeException | Error e) {
            log.error("onLost listener for '{}' threw; ignored", key.name(), e);
        }
    }
}
