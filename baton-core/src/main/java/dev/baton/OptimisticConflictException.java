package dev.baton;

/**
 * An optimistic update lost to concurrent writers on every attempt it was allowed: each time, another writer
 * committed a new version between this update's read and its write, so this update's work was rolled back
 * (nothing it wrote was kept). Carries the number of attempts made and the last version read.
 *
 * <p>Retrying later, or with more attempts, is the normal reaction; a steady stream of these means the record
 * is too hot for optimistic updates and a lock that queues writers fits better.
 */
public class OptimisticConflictException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final int attempts;
    private final long lastVersion;

    /**
     * @param attempts    how many attempts were made (each ran the work once and was rolled back)
     * @param lastVersion the version read by the last attempt
     */
    public OptimisticConflictException(String lockName, int attempts, long lastVersion, String message) {
        super(message);
        this.lockName = lockName;
        this.attempts = attempts;
        this.lastVersion = lastVersion;
    }

    /** The name of the versioned record. */
    public String lockName() {
        return lockName;
    }

    /** How many attempts were made, all of them lost. */
    public int attempts() {
        return attempts;
    }

    /** The version the last attempt read. */
    public long lastVersion() {
        return lastVersion;
    }
}
