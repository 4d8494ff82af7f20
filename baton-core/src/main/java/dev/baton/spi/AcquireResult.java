package dev.baton.spi;

import java.time.Duration;

/** The outcome of one acquisition attempt, as the backend reports it. */
public sealed interface AcquireResult {

    /** The lock was granted with this fencing token. */
    record Granted(long token) implements AcquireResult {
    }

    /**
     * Another holder has the lock.
     *
     * @param holder    the holder's id, or {@code null} if the backend did not learn it on this attempt
     * @param token     the holder's fencing token, or {@code -1} if unknown
     * @param remaining how long the holder's lease has left by the server's clock, or {@code null} if unknown
     *                  or if the hold has no expiry
     * @param nextTry   a {@link WaitingQueue} backend's hint that the core should try again within this long, for a
     *                  waiter anywhere in its line that the server will not wake when its turn comes (the JDBC lease
     *                  strategy paces it by the line: about half the time the waiter expects to wait), or
     *                  {@code null} for none: the core then parks as usual
     */
    record Busy(String holder, long token, Duration remaining, Duration nextTry) implements AcquireResult {
        /** A busy answer without a hint for the next try. */
        public Busy(String holder, long token, Duration remaining) {
            this(holder, token, remaining, null);
        }
    }
}
