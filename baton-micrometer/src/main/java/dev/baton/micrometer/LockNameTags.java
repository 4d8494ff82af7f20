package dev.baton.micrometer;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The {@code lock} tag of a lock name: the mapping's value, while fewer than {@code max} distinct values were seen;
 * {@link BatonMetrics#OTHER} after. The set only grows, so a name keeps its tag for the object's life.
 */
final class LockNameTags {
    private final Function<String, String> mapping;
    private final int max;
    private final Set<String> kept = ConcurrentHashMap.newKeySet();

    LockNameTags(Function<String, String> mapping, int max) {
        this.mapping = mapping;
        this.max = max;
    }

    String tag(String lockName) {
        String tag = mapping.apply(lockName);
        if (tag == null) {
            return BatonMetrics.OTHER;
        }
        if (kept.contains(tag)) {
            return tag;
        }
        synchronized (kept) {
            if (kept.contains(tag) || kept.size() < max && kept.add(tag)) {
                return tag;
            }
        }
        return BatonMetrics.OTHER;
    }

    @Override
    public String toString() {
        return kept.size() + " of at most " + max + " kept";
    }
}
