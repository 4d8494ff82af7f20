package dev.baton;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/**
 * A named lock shared by every process that uses the same backend and name. Re-entrant per thread, like
 * {@link java.util.concurrent.locks.ReentrantLock}: a second acquisition by the holding thread returns at
 * once with the same fencing token and a higher hold count, and the lock is released when the last hold is
 * closed. Whether it is fair across processes depends on the backend: the JDBC lease strategy, Redis and
 * ZooKeeper keep a line of waiters on the server and give a free lock to its head; the JDBC session strategy
 * leaves the order to the server's own lock wait. Waiters retry when woken (by a server notification where
 * the backend has one, else at the holder's expiry or a bounded poll).
 *
 * <p>Handles are cheap and thread safe; any thread may use the same handle.
 */
public interface DistributedLock {

    /** The lock name. */
    String name();

    /**
     * Tries once to acquire the lock, without waiting. Like {@link Lock#tryLock()}, it does not look at the
     * thread's interrupt flag (there is no wait to interrupt) and leaves it as it was.
     *
     * @return the lease, or empty if another holder has the lock (not an exception)
     * @throws LockLostException    if the calling thread holds this lock already and that lease was lost
     * @throws LockBackendException if the backend could not be reached
     * @throws LockException        if the client is closed, or the backend refuses the name (a JDBC name used
     *                                  with another strategy in the same table: one name, one lock)
     */
    Optional<Lease> tryAcquire();

    /**
     * Acquires the lock, waiting at most {@code maxWait}. {@code Duration.ZERO} tries once, as
     * {@link #tryAcquire()} does (the interrupt flag is not looked at). A wait too long to count in
     * nanoseconds (292 years) waits as long as it takes.
     *
     * @throws IllegalArgumentException   if {@code maxWait} is null or negative
     * @throws LockTimeoutException       if the lock was not acquired in time
     * @throws LockInterruptedException   if the thread was interrupted while waiting (its flag is set again)
     * @throws LockLostException          if the calling thread holds this lock already and that lease was lost
     * @throws LockBackendException       if the backend could not be reached
     * @throws LockException              if the client is closed, or the backend refuses the name (a JDBC name used
     *                                  with another strategy in the same table: one name, one lock)
     */
    Lease acquire(Duration maxWait);

    /**
     * Acquires the lock, waiting as long as it takes.
     *
     * @throws LockInterruptedException if the thread was interrupted while waiting (its flag is set again)
     * @throws LockLostException        if the calling thread holds this lock already and that lease was lost
     * @throws LockBackendException     if the backend could not be reached
     * @throws LockException            if the client is closed, or the backend refuses the name (a JDBC name used
     *                                  with another strategy in the same table: one name, one lock)
     */
    Lease acquire();

    /** Whether the calling thread holds this lock (valid or not yet closed after being lost). */
    boolean isHeldByCurrentThread();

    /**
     * A {@link Lock} view for code written against {@code java.util.concurrent}. {@code unlock()} must be
     * called by the thread that locked, else it throws {@link IllegalMonitorStateException}; conditions are
     * not supported.
     */
    Lock asLock();
}
