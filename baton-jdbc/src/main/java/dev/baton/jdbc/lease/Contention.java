package dev.baton.jdbc.lease;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The names this client found contended lately: a hint, not state, that decides whether a first attempt at a name
 * looks before it writes. For {@link #WINDOW_NANOS} after an attempt found a name held, or kept for a waiter, a first
 * attempt at it looks first (a losing grant statement still locks the row and commits on some servers, a read does
 * not); after that, a first attempt goes straight to the grant.
 */
final class Contention {
    /** How long a busy answer for a name counts as contention in this client. */
    static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Names found held, or kept for a waiter, by an attempt of this client lately: the {@link System#nanoTime()} then. */
    private final ConcurrentHashMap<String, Long> lastBusy = new ConcurrentHashMap<>();

    void found(String name) {
        if (lastBusy.size() >= 10_000) {
            lastBusy.clear(); // a hint, not state: a name forgotten early costs one attempt without a look
        }
        lastBusy.put(name, System.nanoTime());
    }

    boolean recently(String name) {
        Long at = lastBusy.get(name);
        if (at == null) {
            return false;
        }
        if (System.nanoTime() - at < WINDOW_NANOS) {
            return true;
        }
        lastBusy.remove(name, at);
        return false;
    }
}
