package dev.baton.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One acquisition as the core hands it to a backend. The same request object is passed to every attempt of one
 * acquisition (its first {@link LockBackend#tryAcquire try}, each {@link BlockingWait#awaitGrant wait slice}, the
 * {@link WaitingQueue#withdraw withdrawal}), so a backend may key what it keeps for a waiter by it.
 *
 * @param name      the validated lock name
 * @param mode      exclusive, or a side of a read-write lock ({@link ReadWriteModes} backends only)
 * @param owner     the holder id recorded on the server: the client's id and the acquiring thread
 * @param leaseTime the lease to grant, by the server's clock
 * @param patience  whether the caller waits when the lock is busy; a {@link WaitingQueue} backend may skip
 *                  taking a place in line for a {@link Patience#TRY_ONCE} request
 */
public record AcquireRequest(String name, LockMode mode, String owner, Duration leaseTime, Patience patience) {

    /** Whether the caller of an acquisition will wait when the first attempt finds the lock busy. */
    public enum Patience {
        /** {@code tryAcquire()} or a zero wait: one attempt, no waiting. */
        TRY_ONCE,
        /** A wait with a deadline or none: the waiter keeps trying until granted, timed out or interrupted. */
        WAIT
    }

    public AcquireRequest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(patience, "patience");
    }

    // equals and hashCode written out, as the record's own: the generated ones are linked by invokedynamic on
    // first use, which spins method-handle classes at run time on every start of a short-lived process

    @Override
    public boolean equals(Object o) {
        return o instanceof AcquireRequest r && name.equals(r.name) && mode == r.mode && owner.equals(r.owner)
                && leaseTime.equals(r.leaseTime) && patience == r.patience;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, mode, owner, leaseTime, patience);
    }
}
