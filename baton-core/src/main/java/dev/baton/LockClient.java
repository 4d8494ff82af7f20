package dev.baton;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * Entry point: one per process and backend. Owns the backend's connections, the renewal scheduler and a
 * unique client id ({@code host/pid/random}). Closing it releases every lease it holds; their
 * {@link Lease#onLost} listeners run, since their holders did not give them back.
 *
 * <p>Thread safety: all methods may be called from any thread.
 */
public interface LockClient extends AutoCloseable {

    /**
     * A handle on the lock with this name. Cheap; does not contact the backend.
     *
     * @throws IllegalArgumentException if the name is null, empty, longer than {@value LockNames#MAX_LENGTH}
     *                                  code points, or contains U+0000 or an unpaired surrogate
     */
    DistributedLock lock(String name);

    /**
     * A handle on the read-write lock with this name (a namespace apart from {@link #lock}). Cheap.
     *
     * @throws IllegalArgumentException      for an invalid name, as for {@link #lock}
     * @throws UnsupportedOperationException if this client's strategy has no read-write locks (the message
     *                                       says which strategies do)
     */
    DistributedReadWriteLock readWriteLock(String name);

    /**
     * Runs {@code task} while holding the named lock, waiting at most {@code maxWait} for it, and returns the
     * task's result. The lock is released when the task ends, normally or not.
     *
     * @throws LockTimeoutException     if the lock was not acquired in time (the task did not run)
     * @throws LockInterruptedException if interrupted while waiting
     * @throws IllegalArgumentException for an invalid name or wait
     * @throws LockBackendException     if the backend could not be reached
     */
    <T> T withLock(String name, Duration maxWait, Supplier<T> task);

    /**
     * Runs {@code task} while holding the named lock, waiting at most {@code maxWait} for it.
     *
     * @throws LockTimeoutException     if the lock was not acquired in time (the task did not run)
     * @throws LockInterruptedException if interrupted while waiting
     * @throws IllegalArgumentException for an invalid name or wait
     * @throws LockBackendException     if the backend could not be reached
     */
    void withLock(String name, Duration maxWait, Runnable task);

    /**
     * The locks the backend knows about, held or recently held, as the server sees them.
     *
     * @throws LockBackendException if the backend could not be reached
     */
    List<LockInfo> list();

    /** This client's id, a prefix of every holder id it writes. */
    String clientId();

    /** A description of the backend, such as {@code jdbc-lease/postgresql (table baton_locks)}. */
    String backend();

    /** Releases every lease this client holds and closes its connections. Idempotent. */
    @Override
    void close();
}
