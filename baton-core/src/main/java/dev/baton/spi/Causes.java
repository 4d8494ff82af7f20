package dev.baton.spi;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * An exception's cause chain, as backends and tools classify a failure by what it was caused by: the exception
 * itself, then its cause, that cause's cause and so on, each throwable once (a chain that loops back on itself
 * ends before the repeat).
 */
public final class Causes {
    private Causes() {
    }

    /** {@code e} and its causes, {@code e} first; empty when {@code e} is null. */
    public static List<Throwable> chain(Throwable e) {
        List<Throwable> chain = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = e; t != null && seen.add(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    /** Whether {@code e} or one of its causes passes {@code test}; false when {@code e} is null. */
    public static boolean any(Throwable e, Predicate<? super Throwable> test) {
        return chain(e).stream().anyMatch(test);
    }

    /** The first of {@code e} and its causes that is a {@code type}, if any. */
    public static <T extends Throwable> Optional<T> find(Throwable e, Class<T> type) {
        return chain(e).stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    /** The last of {@code e}'s causes, {@code e} itself when it has none; null when {@code e} is null. */
    public static Throwable root(Throwable e) {
        List<Throwable> chain = chain(e);
        return chain.isEmpty() ? null : chain.get(chain.size() - 1);
    }
}
