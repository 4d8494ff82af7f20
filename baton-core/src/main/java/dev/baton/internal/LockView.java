package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockInterruptedException;
import dev.baton.LockTimeoutException;
import dev.baton.spi.LockMode;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * {@link Lock} view of a distributed lock. Each successful lock call pushes a lease on the calling thread's
 * stack; {@code unlock} pops and closes one, and refuses a thread that holds nothing.
 */
final class LockView implements Lock {
    private final CoreLockClient client;
    private final String name;
    private final LockMode mode;
    private final ConcurrentHashMap<Long, Deque<Lease>> leases = new ConcurrentHashMap<>();

    LockView(CoreLockClient client, String name, LockMode mode) {
        this.client = client;
        this.name = name;
        this.mode = mode;
    }

    private void push(Lease lease) {
        leases.computeIfAbsent(Thread.currentThread().getId(), k -> new ArrayDeque<>()).push(lease);
    }

    @Override
    public void lock() {
        push(client.acquire(name, mode, AcquireOptions.waitForeverUninterruptibly()).orElseThrow());
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        try {
            push(client.acquire(name, mode, AcquireOptions.waitForever()).orElseThrow());
        } catch (LockInterruptedException e) {
            Thread.interrupted(); // InterruptedException convention: the flag is cleared when it is thrown
            InterruptedException ie = new InterruptedException(e.getMessage());
            ie.initCause(e);
            throw ie;
        }
    }

    @Override
    public boolean tryLock() {
        Optional<Lease> lease = client.acquire(name, mode, AcquireOptions.tryOnce());
        lease.ifPresent(this::push);
        return lease.isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            // Lock's contract for the timed form, even for a zero wait (the core's try-once ignores the flag)
            throw new InterruptedException("interrupted before trying lock '" + name + "'");
        }
        try {
            Lease lease = client.acquire(name, mode,
                    AcquireOptions.waitUpTo(CoreLock.waitNanos(Duration.ofNanos(Math.max(0, unit.toNanos(time))))))
                    .orElseThrow();
            push(lease);
            return true;
        } catch (LockTimeoutException e) {
            return false;
        } catch (LockInterruptedException e) {
            Thread.interrupted();
            InterruptedException ie = new InterruptedException(e.getMessage());
            ie.initCause(e);
            throw ie;
        }
    }

    @Override
    public void unlock() {
        Deque<Lease> stack = leases.get(Thread.currentThread().getId());
        Lease lease = stack == null ? null : stack.poll();
        if (lease == null) {
            throw new IllegalMonitorStateException("the current thread (" + Thread.currentThread().getName()
                    + ") does not hold lock '" + name + "' through this view");
        }
        if (stack.isEmpty()) {
            leases.remove(Thread.currentThread().getId());
        }
        lease.close();
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("distributed lock '" + name + "' does not support conditions: "
                + "a condition would need waiting and signalling across processes, which Baton does not offer");
    }
}
