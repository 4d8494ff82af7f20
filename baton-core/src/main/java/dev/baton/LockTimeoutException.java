package dev.baton;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The lock was not acquired within the time the caller allowed. Carries the lock name, the time actually
 * waited and, when the backend reported it on the last attempt, who held the lock.
 */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final Duration waited;
    private final String holder;
    private final long holderToken;
    private final Duration holderRemaining;

    /**
     * @param holderToken     the holder's fencing token, or a negative number if unknown
     * @param holderRemaining how long the holder's lease had left by the server's clock, or null if unknown
     */
    public LockTimeoutException(String lockName, Duration waited, String holder, long holderToken,
                                Duration holderRemaining, String message) {
        super(message);
        this.lockName = lockName;
        this.waited = waited;
        this.holder = holder;
        this.holderToken = holderToken;
        this.holderRemaining = holderRemaining;
    }

    /** The name of the lock that was not acquired. */
    public String lockName() {
        return lockName;
    }

    /** How long the caller actually waited. */
    public Duration waited() {
        return waited;
    }

    /** The holder reported by the backend on the last attempt, if it reported one. */
    public Optional<String> holder() {
        return Optional.ofNullable(holder);
    }

    /** The holder's fencing token on the last attempt, if the backend reported it. */
    public OptionalLong holderToken() {
        return holder != null && holderToken >= 0 ? OptionalLong.of(holderToken) : OptionalLong.empty();
    }

    /** How long the holder's lease had left on the last attempt, by the server's clock, if reported. */
    public Optional<Duration> holderRemaining() {
        return Optional.ofNullable(holderRemaining);
    }
}
