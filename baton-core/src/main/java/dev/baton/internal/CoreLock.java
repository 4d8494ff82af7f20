package dev.baton.internal;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.spi.LockMode;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/** A lock handle: a name bound to a client. Holds no state of its own. */
final class CoreLock implements DistributedLock {
    private final CoreLockClient client;
    private final String name;
    private final LockMode mode;

    CoreLock(CoreLockClient client, String name, LockMode mode) {
        this.client = client;
        this.name = name;
        this.mode = mode;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Optional<Lease> tryAcquire() {
        return client.tryAcquire(name, mode);
    }

    @Override
    public Lease acquire(Duration maxWait) {
        return client.acquire(name, mode, AcquireOptions.waitUpTo(waitNanos(maxWait))).orElseThrow();
    }

    @Override
    public Lease acquire() {
        return client.acquire(name, mode, AcquireOptions.waitForever()).orElseThrow();
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return client.isHeldByCurrentThread(name, mode);
    }

    @Override
    public Lock asLock() {
        return new LockView(client, name, mode);
    }

    static long waitNanos(Duration maxWait) {
        if (maxWait == null) {
            throw new IllegalArgumentException("maxWait must not be null");
        }
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait);
        }
        return saturatedNanos(maxWait);
    }

    /** A non-negative duration in nanoseconds, {@code Long.MAX_VALUE} (292 years: forever) when it does not fit. */
    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public String toString() {
        return "DistributedLock[" + name + (mode == LockMode.EXCLUSIVE ? "" : " (" + mode.name().toLowerCase() + ")")
                + " on " + client.backend() + "]";
    }
}
