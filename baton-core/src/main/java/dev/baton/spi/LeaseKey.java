package dev.baton.spi;

import java.util.Objects;

/**
 * Identifies one grant on the server: release and renewal act only where all of it matches, so a holder
 * whose lease ran out can never release or extend the grant of the holder that took over.
 *
 * @param name  the lock name
 * @param owner the holder id
 * @param token the fencing token of the grant
 * @param mode  the kind of hold ({@link LockMode#EXCLUSIVE} for a plain lock)
 */
public record LeaseKey(String name, String owner, long token, LockMode mode) {
    public LeaseKey {
        Objects.requireNonNull(mode, "mode");
    }

    /** A key of a plain, exclusive lock. */
    public LeaseKey(String name, String owner, long token) {
        this(name, owner, token, LockMode.EXCLUSIVE);
    }
}
