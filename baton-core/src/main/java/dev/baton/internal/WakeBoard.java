package dev.baton.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Where waiters park between attempts, and where releases (local, or heard from the server) wake them.
 * A waiter registers before its first attempt and drains its permits before each attempt, so a release
 * that happens between an attempt and the park is never lost: it leaves a permit behind.
 */
final class WakeBoard {
    private final ConcurrentHashMap<String, Set<Waiter>> waiters = new ConcurrentHashMap<>();

    /** @param owner the waiter's {@link dev.baton.spi.AcquireRequest#owner()}, for a wake-up meant for it alone */
    Waiter register(String name, String owner) {
        Waiter w = new Waiter(name, owner);
        waiters.compute(name, (k, set) -> {
            Set<Waiter> s = set != null ? set : ConcurrentHashMap.newKeySet();
            s.add(w);
            return s;
        });
        return w;
    }

    void unregister(Waiter w) {
        waiters.computeIfPresent(w.name, (k, set) -> {
            set.remove(w);
            return set.isEmpty() ? null : set;
        });
    }

    void signal(String name) {
        Set<Waiter> set = waiters.get(name);
        if (set != null) {
            set.forEach(Waiter::wake);
        }
    }

    /** Wakes the waiters of {@code name} whose owner is {@code owner} (none, if that waiter is not this client's). */
    void signal(String name, String owner) {
        Set<Waiter> set = waiters.get(name);
        if (set != null) {
            set.forEach(w -> {
                if (w.owner.equals(owner)) {
                    w.wake();
                }
            });
        }
    }

    void signalAll() {
        waiters.values().forEach(set -> set.forEach(Waiter::wake));
    }

    static final class Waiter {
        private final String name;
        private final String owner;
        private final Semaphore permits = new Semaphore(0);

        private Waiter(String name, String owner) {
            this.name = name;
            this.owner = owner;
        }

        void wake() {
            permits.release();
        }

        void drain() {
            permits.drainPermits();
        }

        /** Parks up to {@code nanos}; returns early when woken. */
        void await(long nanos, boolean interruptible) throws InterruptedException {
            if (nanos <= 0) {
                return;
            }
            if (interruptible) {
                permits.tryAcquire(nanos, TimeUnit.NANOSECONDS);
                return;
            }
            boolean interrupted = false;
            long end = System.nanoTime() + nanos;
            try {
                while (true) {
                    try {
                        permits.tryAcquire(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                        return;
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
