package dev.baton.redis;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The highest fencing token this client has seen for each of the locks it used last (its own grants and the
 * holders' tokens it was told of), at most {@link #CAPACITY} locks, least recently used forgotten first. Sent
 * with each acquire as the floor of the next token, so this client is never granted a token at or below one it
 * saw, even when the server lost (or set back) the lock's counter and its clock is behind. Thread-safe.
 */
final class SeenTokens {
    static final int CAPACITY = 65_536;

    private final Map<String, Long> highest = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > CAPACITY;
        }
    };

    /** The highest token seen for the lock, or 0. */
    synchronized long highest(String name) {
        Long t = highest.get(name);
        return t == null ? 0 : t;
    }

    /** Records a token seen for the lock. */
    synchronized void saw(String name, long token) {
        if (token > 0) {
            highest.merge(name, token, Math::max);
        }
    }
}
