package dev.baton;

/**
 * A named read-write lock: any number of readers across processes, or one writer. Writers are not starved by
 * a steady stream of readers: once a writer waits, new readers wait behind it. Each side is a
 * {@link DistributedLock} with the usual vocabulary and its own fencing tokens (every grant, read or write,
 * gets a token greater than every earlier grant's of the same read-write lock). Re-entrant per thread on
 * each side; a thread that holds one side and asks for the other is refused with
 * {@link IllegalStateException} (no upgrade or downgrade), because it would wait for itself.
 *
 * <p>Read-write locks live in their own namespace: {@code readWriteLock("x")} and {@code lock("x")} are
 * different locks.
 */
public interface DistributedReadWriteLock {

    /** The lock name. */
    String name();

    /** The shared side. */
    DistributedLock readLock();

    /** The exclusive side. */
    DistributedLock writeLock();
}
