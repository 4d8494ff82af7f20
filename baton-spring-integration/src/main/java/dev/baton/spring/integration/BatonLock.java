package dev.baton.spring.integration;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.LockInterruptedException;
import dev.baton.LockTimeoutException;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A {@link Lock} from a {@link BatonLockRegistry}: one Baton {@link DistributedLock}, re-entrant per thread, held
 * across every process that uses the same backend and name. Each first hold is a Baton lease with a fencing token,
 * renewed in the background while held; {@link #fencingToken()} gives it to the code that writes under the lock.
 *
 * <p>{@link #unlock()} must be called by the thread that locked ({@link IllegalMonitorStateException} otherwise), as
 * with {@link java.util.concurrent.locks.ReentrantLock}. A re-entrant {@code tryLock} on a lease that was lost throws
 * {@link dev.baton.LockLostException}: that is how {@code LockRegistryLeaderInitiator} learns that its term ended.
 * Conditions are not supported.
 *
 * <p>Thread safety: one instance serves every thread.
 */
public final class BatonLock implements Lock {
    private final DistributedLock lock;
    /** The holds taken through this object, per holding thread id, innermost last. */
    private final Map<Long, ArrayDeque<Lease>> holds = new ConcurrentHashMap<>();
    private volatile long lastUsedNanos = System.nanoTime();

    BatonLock(DistributedLock lock) {
        this.lock = lock;
    }

    /** The lock name. */
    public String name() {
        return lock.name();
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        while (true) {
            try {
                held(lock.acquire());
                break;
            } catch (LockInterruptedException e) {
                interrupted = true; // Lock.lock() is not interruptible: wait on, restore the flag after
                Thread.interrupted();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before locking '" + name() + "'");
        }
        try {
            held(lock.acquire());
        } catch (LockInterruptedException e) {
            Thread.interrupted();
            throw interrupted(e);
        }
    }

    @Override
    public boolean tryLock() {
        Optional<Lease> lease = lock.tryAcquire();
        lease.ifPresent(this::held);
        return lease.isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before locking '" + name() + "'");
        }
        try {
            held(lock.acquire(Duration.ofNanos(Math.max(0, unit.toNanos(time)))));
            return true;
        } catch (LockTimeoutException e) {
            return false;
        } catch (LockInterruptedException e) {
            Thread.interrupted();
            throw interrupted(e);
        }
    }

    /**
     * Gives back the calling thread's innermost hold; the lock is released on the server when the thread's last
     * hold is given back.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold this lock
     * @throws dev.baton.LockBackendException if the release of a valid lease could not reach the backend (it then ends
     *                                        on the server when its lease time runs out)
     */
    @Override
    public void unlock() {
        long thread = Thread.currentThread().getId();
        ArrayDeque<Lease> mine = holds.get(thread);
        Lease lease = mine == null ? null : mine.pollLast();
        if (lease == null) {
            throw new IllegalMonitorStateException("thread " + Thread.currentThread().getName()
                    + " does not hold lock '" + name() + "'");
        }
        if (mine.isEmpty()) {
            holds.remove(thread);
        }
        lastUsedNanos = System.nanoTime();
        lease.close();
    }

    /** Not supported: a distributed lock has no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a Baton lock has no conditions ('" + name() + "')");
    }

    /** Whether the calling thread holds this lock. */
    public boolean isHeldByCurrentThread() {
        return holds.containsKey(Thread.currentThread().getId());
    }

    /** Whether some thread of this process holds this lock through this object (local state). */
    public boolean isHeld() {
        return !holds.isEmpty();
    }

    /**
     * The fencing token of the current hold: the calling thread's if it holds the lock, else the hold of the thread
     * that does in this process (the leader initiator's, for a leader election). Strictly greater than the token of
     * every earlier grant of this name, on any node: for a leader election, a token per term.
     *
     * @return the token, or empty if no thread of this process holds the lock through this object
     */
    public OptionalLong fencingToken() {
        return currentLease().map(l -> OptionalLong.of(l.fencingToken())).orElse(OptionalLong.empty());
    }

    /**
     * The Baton lease of the current hold (the calling thread's, else any holding thread's), for
     * {@link Lease#checkValid()} before a critical write. Do not close it: {@link #unlock()} does.
     */
    public Optional<Lease> currentLease() {
        ArrayDeque<Lease> mine = holds.get(Thread.currentThread().getId());
        if (mine != null) {
            Lease l = mine.peekLast();
            if (l != null) {
                return Optional.of(l);
            }
        }
        for (ArrayDeque<Lease> other : holds.values()) {
            Lease l = other.peekLast();
            if (l != null) {
                return Optional.of(l);
            }
        }
        return Optional.empty();
    }

    long lastUsedNanos() {
        return lastUsedNanos;
    }

    private void held(Lease lease) {
        lastUsedNanos = System.nanoTime();
        holds.computeIfAbsent(Thread.currentThread().getId(), t -> new ArrayDeque<>()).addLast(lease);
    }

    private InterruptedException interrupted(LockInterruptedException e) {
        InterruptedException ie = new InterruptedException(e.getMessage());
        ie.initCause(e);
        return ie;
    }

    @Override
    public String toString() {
        return "BatonLock[" + name() + (isHeld() ? ", held" : "") + "]";
    }
}
