package dev.baton.internal;

/**
 * How one acquisition waits, named rather than passed as flags.
 *
 * @param maxWaitNanos how long it may wait: {@link #FOREVER}, 0 for one attempt, else a bound
 * @param interrupts   whether an interrupt ends the wait ({@link Interrupts#END_THE_WAIT}) or is kept for the caller
 *                     and set again on return ({@link Interrupts#DEFER}, {@code Lock.lock()}'s contract)
 * @param onBusy       what a caller gets when the lock stays busy: an exception, or an empty result
 */
record AcquireOptions(long maxWaitNanos, Interrupts interrupts, OnBusy onBusy) {
    static final long FOREVER = -1;

    enum Interrupts { END_THE_WAIT, DEFER }

    enum OnBusy { THROW_TIMEOUT, EMPTY }

    /** {@code tryAcquire()}, {@code tryLock()}: one attempt; busy gives an empty result. */
    static AcquireOptions tryOnce() {
        return new AcquireOptions(0, Interrupts.END_THE_WAIT, OnBusy.EMPTY);
    }

    /** {@code acquire(maxWait)}: waits up to the bound, interruptibly; busy at the end throws. */
    static AcquireOptions waitUpTo(long nanos) {
        return new AcquireOptions(nanos, Interrupts.END_THE_WAIT, OnBusy.THROW_TIMEOUT);
    }

    /** {@code acquire()}: waits until granted, interruptibly. */
    static AcquireOptions waitForever() {
        return waitUpTo(FOREVER);
    }

    /** {@code Lock.lock()}: waits until granted; an interrupt is kept for the caller. */
    static AcquireOptions waitForeverUninterruptibly() {
        return new AcquireOptions(FOREVER, Interrupts.DEFER, OnBusy.THROW_TIMEOUT);
    }

    boolean forever() {
        return maxWaitNanos < 0;
    }

    boolean waits() {
        return maxWaitNanos != 0;
    }
}
