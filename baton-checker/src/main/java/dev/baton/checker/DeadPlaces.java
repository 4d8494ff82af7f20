package dev.baton.checker;

import dev.baton.LockInfo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * Check (f), dead waiters: a lock that is free while a live waiter stands in its line behind the place of a waiter
 * whose process is dead is granted within the strategy's bound ({@link CheckStrategy#deadPlaceBound}) plus the
 * scenario's margin. Read from the controller's listings of the locks (each with its line, {@link LockInfo#line()}):
 * a <em>window</em> is a run of consecutive listings in which one lock is not held and one live waiter (its process
 * alive) has, ahead of it in the line, a place whose process had died before the listing began. The window runs from
 * the first such listing's end to the last one's start, so it is never longer than the lock was seen that way; no
 * grant of the lock may have been made within it (the workers' histories, or the resource's, say so), else the
 * lock was not free all along. Whether a place is dead is decided by its process, never by what the backend says of
 * it: a backend that keeps a dead place "alive" for a lease is exactly what this check is there to catch.
 *
 * <p>Shared by the worker mode ({@link Analysis}) and {@code --via-cli} ({@link CliScenario}), which differ only in how
 * an owner id names a process and where grants are recorded.
 */
final class DeadPlaces {
    private DeadPlaces() {
    }

    /** One listing of the locks, made between {@code s0} and {@code s1} ({@link System#nanoTime()}). */
    record Look(long s0, long s1, List<LockInfo> locks) {
    }

    /**
     * A lock seen free while {@code waiter}, alive, stood behind the places of dead processes.
     *
     * @param from      the end of the first listing that showed it
     * @param to        the start of the last listing that showed it
     * @param firstS0   the start of the first listing (a grant after it would have shown)
     * @param lastS1    the end of the last listing
     * @param deadAhead the owners of the dead places ahead of the waiter, as first seen
     */
    record Window(String lock, String waiter, long from, long to, long firstS0, long lastS1, List<String> deadAhead) {
        long length() {
            return Math.max(0, to - from);
        }
    }

    /**
     * The windows in these listings (in the order they were made).
     *
     * @param diedAt when the process of an owner id died ({@link System#nanoTime()}), or {@link Long#MAX_VALUE} if it
     *               has not (or the owner names no process of the run)
     */
    static List<Window> windows(List<Look> looks, ToLongFunction<String> diedAt) {
        Map<String, Window> open = new LinkedHashMap<>();
        List<Window> closed = new ArrayList<>();
        for (Look look : looks) {
            Map<String, Window> seen = new LinkedHashMap<>();
            for (LockInfo info : look.locks()) {
                if (info.held() || info.line().size() < 2) {
                    continue;
                }
                List<String> dead = new ArrayList<>();
                for (LockInfo.Waiter w : info.line()) {
                    if (diedAt.applyAsLong(w.owner()) < look.s0()) {
                        dead.add(w.owner());
                    } else if (!dead.isEmpty() && diedAt.applyAsLong(w.owner()) > look.s1()) {
                        String key = info.name() + " " + w.owner();
                        Window before = open.get(key);
                        seen.put(key, before == null
                                ? new Window(info.name(), w.owner(), look.s1(), look.s0(), look.s0(), look.s1(), List.copyOf(dead))
                                : new Window(info.name(), w.owner(), before.from(), look.s0(), before.firstS0(), look.s1(),
                                        before.deadAhead()));
                    }
                }
            }
            for (Map.Entry<String, Window> e : open.entrySet()) {
                if (!seen.containsKey(e.getKey())) {
                    closed.add(e.getValue());
                }
            }
            open = seen;
        }
        closed.addAll(open.values());
        return closed;
    }
}
