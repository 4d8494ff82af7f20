package dev.baton.internal;

import dev.baton.LockLostException;
import dev.baton.LockObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * A user's {@link LockObserver} behind a guard: anything it throws, an {@link Error} too (an
 * {@link AssertionError}, a {@link NoClassDefFoundError} of a missing metrics library), is logged and ignored, so an
 * observer never changes the outcome of the call it observes, nor stops the renewer or the watchdog thread. Only clients with an observer create one; the others skip every
 * call.
 */
final class GuardedObserver {
    private static final Logger log = LoggerFactory.getLogger(GuardedObserver.class);

    private final LockObserver observer;
    private final String backend;

    GuardedObserver(LockObserver observer, String backend) {
        this.observer = observer;
        this.backend = backend;
    }

    LockObserver.Acquisition acquireStarted(String lockName, boolean waits) {
        try {
            LockObserver.Acquisition a = observer.acquireStarted(backend, lockName, waits);
            return a != null ? a : LockObserver.Acquisition.NONE;
        } catch (Throwable e) {
            failed("acquireStarted", e);
            return LockObserver.Acquisition.NONE;
        }
    }

    void acquireEnded(LockObserver.Acquisition a, LockObserver.Outcome outcome, long latencyNanos, long waitedNanos,
                      Throwable error) {
        try {
            a.ended(outcome, Duration.ofNanos(latencyNanos), Duration.ofNanos(waitedNanos), error);
        } catch (Throwable e) {
            failed("Acquisition.ended", e);
        }
    }

    void leaseGranted(String lockName, long token) {
        try {
            observer.leaseGranted(backend, lockName, token);
        } catch (Throwable e) {
            failed("leaseGranted", e);
        }
    }

    void leaseReleased(String lockName, long heldNanos, boolean wasLost) {
        try {
            observer.leaseReleased(backend, lockName, Duration.ofNanos(Math.max(0, heldNanos)), wasLost);
        } catch (Throwable e) {
            failed("leaseReleased", e);
        }
    }

    void leaseLost(String lockName, LockObserver.LossCause cause, LockLostException reason) {
        try {
            observer.leaseLost(backend, lockName, cause, reason);
        } catch (Throwable e) {
            failed("leaseLost", e);
        }
    }

    void renewed(int renewed, int failed, long tookNanos) {
        try {
            observer.renewed(backend, renewed, failed, Duration.ofNanos(Math.max(0, tookNanos)));
        } catch (Throwable e) {
            failed("renewed", e);
        }
    }

    private void failed(String method, Throwable e) {
        log.warn("LockObserver {}.{} threw; ignored", observer.getClass().getName(), method, e);
    }
}
