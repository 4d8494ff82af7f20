package dev.baton.shedlock;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockLostException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;

/**
 * One Baton lease taken for a ShedLock lock, shared by the lock and its extensions. States: {@code HELD} (the task
 * runs), {@code KEPT} (unlocked before lockAtLeastFor passed: still held, released by the timer), {@code ENDED}
 * (released, capped at lockAtMostFor, or lost). Every transition holds this object's monitor, so the cap timer, an
 * unlock and an extend never release twice or extend a released lease.
 */
final class Grant {
    private static final Logger log = LoggerFactory.getLogger(BatonLockProvider.class);

    enum State { NEW, HELD, KEPT, ENDED }

    private final String name;
    private final BatonLockProvider provider;
    private volatile State state = State.NEW;
    /** Set once by start, before the lock is handed out; read without the monitor by the task's token lookups. */
    private volatile Lease lease;
    /** Monotonic deadlines (System.nanoTime). */
    private long capAt;
    private long keepUntil;
    private ScheduledFuture<?> capTimer;
    private ScheduledFuture<?> keepTimer;
    /** Why it ended, for checkValid; null while not ended. */
    private String endReason;
    /** Set when the task gave the lock back (unlock), whatever the lease does after. */
    private volatile boolean taskDone;

    Grant(String name, BatonLockProvider provider) {
        this.name = name;
        this.provider = provider;
    }

    synchronized void start(Lease lease, long startNanos, Duration atMost, Duration atLeast) {
        this.lease = lease;
        this.capAt = startNanos + BatonLockProvider.nanos(atMost);
        this.keepUntil = startNanos + BatonLockProvider.nanos(atLeast);
        this.state = State.HELD;
        try {
            scheduleCap();
        } catch (RejectedExecutionException e) {
            end("the provider was closed", false);
            throw new IllegalStateException("BatonLockProvider is closed: cannot lock '" + name + "'", e);
        }
        lease.onLost(lost -> {
            try {
                provider.timer().execute(() -> end("its Baton lease was lost: " + lost.getMessage(), false));
            } catch (RejectedExecutionException closed) {
                // the provider is closing: it ends every grant itself
            }
        });
    }

    private void scheduleCap() {
        capTimer = provider.timer().schedule(() -> {
            synchronized (this) {
                if (state == State.HELD) {
                    log.warn("ShedLock lock '{}' (token {}) was still held when lockAtMostFor passed: released, "
                            + "although its task may still run", name, lease.fencingToken());
                }
            }
            end("lockAtMostFor passed", false);
        }, capAt - System.nanoTime(), BatonLockProvider.NANOS);
    }

    String name() {
        return name;
    }

    long token() {
        return lease.fencingToken();
    }

    boolean taskDone() {
        return taskDone;
    }

    /** Whether the task gave it back or the lock ended without it (capped, lost): nothing to keep on its thread. */
    boolean over() {
        return taskDone || state == State.ENDED;
    }

    /** Called by the holding task's unlock: release now, or keep until lockAtLeastFor has passed. */
    void unlock() {
        taskDone = true;
        synchronized (this) {
            if (state != State.HELD) {
                return; // capped or lost already: released
            }
            long left = keepUntil - System.nanoTime();
            if (left > 0) {
                try {
                    keepTimer = provider.timer().schedule(() -> end("lockAtLeastFor passed", false), left,
                            BatonLockProvider.NANOS);
                    state = State.KEPT;
                    return;
                } catch (RejectedExecutionException closed) {
                    // provider closed: release now
                }
            }
        }
        end("unlocked", true);
    }

    /**
     * Ends the grant now if its {@code lockAtMostFor} (held) or {@code lockAtLeastFor} (kept) has passed, so that
     * a release that is due never waits for the timer thread to be scheduled.
     */
    void endIfDue() {
        String reason = null;
        synchronized (this) {
            long now = System.nanoTime();
            if (state == State.HELD && now - capAt >= 0) {
                reason = "lockAtMostFor passed";
            } else if (state == State.KEPT && now - keepUntil >= 0) {
                reason = "lockAtLeastFor passed";
            }
        }
        if (reason != null) {
            end(reason, false);
        }
    }

    /** Extends a held lock: true if the lease is confirmed held and both durations restart from now. */
    boolean extend(Duration atMost, Duration atLeast) {
        String failure;
        synchronized (this) {
            if (state != State.HELD) {
                return false;
            }
            long now = System.nanoTime();
            if (now - capAt >= 0) {
                failure = "lockAtMostFor passed before extend";
            } else {
                try {
                    lease.checkValid();
                    capTimer.cancel(false);
                    capAt = now + BatonLockProvider.nanos(atMost);
                    keepUntil = now + BatonLockProvider.nanos(atLeast);
                    scheduleCap();
                    return true;
                } catch (LockLostException e) {
                    failure = "its Baton lease was lost: " + e.getMessage();
                } catch (LockBackendException e) {
                    log.warn("ShedLock lock '{}' (token {}) not extended: the server could not confirm the lease; "
                            + "releasing it", name, lease.fencingToken(), e);
                    failure = "the server could not confirm it on extend: " + e.getMessage();
                } catch (RejectedExecutionException e) {
                    failure = "the provider was closed";
                }
            }
        }
        end(failure, false);
        return false;
    }

    /** The exact check for the running task: throws if the lock ended or the server no longer shows the lease. */
    void checkValid() {
        Lease current;
        synchronized (this) {
            if (state == State.ENDED) {
                throw new LockLostException(name, lease.fencingToken(), "ShedLock lock '" + name + "' (token "
                        + lease.fencingToken() + ") is no longer held: " + endReason);
            }
            current = lease;
        }
        current.checkValid();
    }

    /**
     * Releases the lease once. With {@code rethrow}, a failed release is thrown to the caller (an unlock), else
     * logged (a timer).
     */
    void end(String reason, boolean rethrow) {
        synchronized (this) {
            if (state == State.ENDED) {
                return;
            }
            state = State.ENDED;
            endReason = reason;
            if (capTimer != null) {
                capTimer.cancel(false);
            }
            if (keepTimer != null) {
                keepTimer.cancel(false);
            }
            try {
                if (lease != null) {
                    lease.close();
                }
            } catch (RuntimeException e) {
                if (rethrow) {
                    throw e;
                }
                log.warn("release of ShedLock lock '{}' ({}) failed; its lease ends on the server when its lease "
                        + "time runs out", name, reason, e);
            } finally {
                provider.forget(name, this);
            }
        }
    }
}
