package dev.baton.spring.boot;

import dev.baton.Lease;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lease of the innermost {@link WithLock} method running on the calling thread, for its fencing token. Set by
 * the method's interceptor before the method runs and removed when it returns; a nested {@code @WithLock} method
 * sees its own lease, its caller its own again afterwards. Not inherited by threads the method starts: pass the
 * lease or its token to them.
 */
public final class CurrentLease {
    private static final ThreadLocal<Deque<Lease>> LEASES = new ThreadLocal<>();

    private CurrentLease() {
    }

    /**
     * The lease of the innermost {@code @WithLock} method running on this thread.
     *
     * @throws IllegalStateException if no {@code @WithLock} method runs on this thread
     */
    public static Lease get() {
        return find().orElseThrow(() -> new IllegalStateException("no @WithLock method runs on thread "
                + Thread.currentThread().getName() + ": CurrentLease.get() is for the body of a @WithLock method"
                + " called through its Spring proxy"));
    }

    /** The lease of the innermost {@code @WithLock} method running on this thread, or empty. */
    public static Optional<Lease> find() {
        Deque<Lease> leases = LEASES.get();
        return leases == null ? Optional.empty() : Optional.ofNullable(leases.peek());
    }

    static void push(Lease lease) {
        Deque<Lease> leases = LEASES.get();
        if (leases == null) {
            leases = new ArrayDeque<>();
            LEASES.set(leases);
        }
        leases.push(lease);
    }

    static void pop() {
        Deque<Lease> leases = LEASES.get();
        if (leases != null) {
            leases.poll();
            if (leases.isEmpty()) {
                LEASES.remove();
            }
        }
    }
}
