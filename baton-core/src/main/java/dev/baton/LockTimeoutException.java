package dev.baton;

import java.time.Duration;
import java.util.Optional;

/**
 * The lock was not acquired within the time the caller allowed. Carries the lock name, the time actually
 * waited and, when the backend reported it on the last attempt, who held the lock.
 */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final Duration waited;
    private final String holder;

    public LockTimeoutException(String lockName, Duration waited, String holder, String message) {
        super(message);
        this.lockName = lockName;
        this.waited = waited;
        this.holder = holder;
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
}
