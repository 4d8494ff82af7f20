package dev.baton.checker;

import dev.baton.checker.Analysis.Attempt;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import static dev.baton.checker.Analysis.errorKind;
import static dev.baton.checker.Analysis.keyOf;
import static dev.baton.checker.Findings.ms;

/**
 * The history the checks judge, rebuilt from the workers' own events: every acquisition attempt (by id, by thread
 * key, and per worker process and lock), the windows in which a fault touched each worker process, and the questions
 * the checks ask of that history — was an attempt faulted in a span, which attempt a fault hit (holder or waiter),
 * which attempts were granted each lock, until when the server may still show an attempt's hold ({@link #holdUntil}),
 * and how long each hand-over took. Nothing here judges: the checks do.
 */
final class Timeline {
    private final Scenario.Record r;
    /** The scenario's notes and the error counts, which reading the events adds to. */
    private final Findings findings;
    private final Map<String, Attempt> byId = new LinkedHashMap<>();
    private final Map<String, Attempt> byKey = new HashMap<>();
    /** The ids of the clients the run's workers built, from their "ready" events. */
    private final Set<String> clientIds = new HashSet<>();
    /** Attempts per worker process and lock ({@code worker.generation lock}), in the order they began. */
    private final Map<String, List<Attempt>> byProcLock = new HashMap<>();
    private final Map<String, List<long[]>> faultWindows = new HashMap<>();
    /** Operations the workers invoked (acquires, releases, accesses, runOnce calls). */
    private long ops;

    Timeline(Scenario.Record r, Findings findings) {
        this.r = r;
        this.findings = findings;
    }

    /** The attempts rebuilt, in the order they were read (a read-only view). */
    Collection<Attempt> attempts() {
        return Collections.unmodifiableCollection(byId.values());
    }

    /** The attempt of this thread key ({@link Attempt#key}), or null. */
    Attempt byKey(String key) {
        return byKey.get(key);
    }

    /** The attempts of worker process {@code worker.generation} on this lock, in the order they began. */
    List<Attempt> ofProcess(int worker, int generation, String lock) {
        return Collections.unmodifiableList(byProcLock.getOrDefault(worker + "." + generation + " " + lock, List.of()));
    }

    /** Operations the workers invoked (acquires, releases, accesses, runOnce calls). */
    long ops() {
        return ops;
    }

    /** Counts one more invoked operation (a {@code runOnce} history, read by {@link RunOnceChecks}). */
    void countOp() {
        ops++;
    }

    void rebuildAttempts() {
        for (Scenario.Proc p : r.procs()) {
            for (Map<String, Object> e : Scenario.readEvents(p, findings.notes)) {
                String type = (String) e.get("type");
                String op = (String) e.get("op");
                String id = (String) e.get("a");
                long t = (Long) e.get("t");
                if ("invoke".equals(type)) {
                    ops++;
                }
                if ("ready".equals(op) && e.get("client") instanceof String client) {
                    clientIds.add(client);
                }
                if (id == null) {
                    continue;
                }
                if (op.equals("acquire") && type.equals("invoke")) {
                    Attempt a = new Attempt();
                    a.id = id;
                    a.worker = p.index;
                    a.generation = p.gen;
                    a.lock = (String) e.get("lock");
                    a.tid = (Long) e.get("tid");
                    a.invokeT = t;
                    a.procEnd = p.ended < 0 ? Long.MAX_VALUE : p.ended;
                    a.procExit = p.exited >= 0 ? p.exited : a.procEnd;
                    byId.put(id, a);
                    byKey.put(a.key(), a);
                    byProcLock.computeIfAbsent(a.worker + "." + a.generation + " " + a.lock, k -> new ArrayList<>()).add(a);
                    continue;
                }
                Attempt a = byId.get(id);
                if (a == null) {
                    continue;
                }
                switch (op) {
                    case "acquire" -> {
                        a.outcome = Outcome.ofEventType(type);
                        a.outcomeT = t;
                        if (a.outcome == Outcome.INDETERMINATE && e.get("msg") instanceof String msg) {
                            a.error = msg;
                            if (t < a.procEnd) { // not the checker closing the client under it
                                findings.errors.merge(errorKind(msg), 1, Integer::sum);
                            }
                        }
                        if (a.outcome == Outcome.OK) {
                            a.token = (Long) e.get("token");
                        }
                    }
                    case "release" -> {
                        if (type.equals("invoke")) {
                            a.releaseT = Math.min(a.releaseT, t);
                        } else {
                            a.releasedOk |= type.equals("ok");
                            a.releaseOutT = Math.min(a.releaseOutT, t);
                        }
                    }
                    case "lost" -> {
                        if (t < a.lostT) {
                            a.lostT = t;
                            a.lostMsg = e.get("msg") instanceof String msg ? msg : null;
                            a.lostDeadline = e.get("deadline") instanceof Long d ? d : Long.MAX_VALUE;
                        }
                    }
                    default -> {
                        // resource accesses are judged from the resource's own record
                    }
                }
            }
        }
    }

    /**
     * Records when a fault touched each worker process, until the fault's end + the lease + the margin: every process
     * for a fault on the whole server (restart, failover), the target's for the others but a kill (which ends it).
     */
    void markFaultWindows() {
        long lease = r.spec().leaseTime().toNanos();
        long margin = r.spec().margin().toNanos();
        for (Scenario.Fault f : r.faults()) {
            if (ScenarioSpec.serverWide(f.kind())) {
                // a restart or failover cuts every worker off the server at once
                for (Scenario.Proc p : r.procs()) {
                    faultWindows.computeIfAbsent(p.index + "." + p.gen, k -> new ArrayList<>())
                            .add(new long[] {f.start(), f.end() + lease + margin});
                }
            } else if (!f.kind().equals("kill") && !f.kind().equals("kill-waiter")) {
                faultWindows.computeIfAbsent(f.worker() + "." + f.generation(), k -> new ArrayList<>())
                        .add(new long[] {f.start(), f.end() + lease + margin});
            }
        }
    }

    boolean faulted(Attempt a, long from, long to) {
        return touched(a.worker, a.generation, from, to);
    }

    /** Whether a fault window of worker process {@code worker.generation} overlaps [from, to). */
    boolean touched(int worker, int generation, long from, long to) {
        List<long[]> ws = faultWindows.get(worker + "." + generation);
        if (ws == null) {
            return false;
        }
        for (long[] win : ws) {
            if (win[0] < to && from < win[1]) {
                return true;
            }
        }
        return false;
    }

    Map<String, List<Attempt>> grantsPerLock() {
        Map<String, List<Attempt>> perLock = new TreeMap<>();
        for (Attempt a : byId.values()) {
            if (a.ok()) {
                perLock.computeIfAbsent(a.lock, k -> new ArrayList<>()).add(a);
            }
        }
        return perLock;
    }

    /** Whether the fault hit a holder, from the holder's own history; the attempt if so. */
    Attempt hitAttempt(Scenario.Fault f) {
        Attempt a = Scenario.isSessionHolder(f.holder()) ? grantedBefore(f.worker(), f.generation(), f.lock(), f.start())
                : byKey.get(f.holder() == null ? "" : keyOf(f.holder()));
        if (a == null || !a.ok() || a.outcomeT >= f.start() || Math.min(a.releaseT, a.lostT) < f.start()) {
            return null;
        }
        if (f.kind().equals("session-kill") && f.effect() == 0) {
            return null;
        }
        return a;
    }

    /**
     * Whether {@code holder} ({@code clientId#thread}) names a client that none of the run's workers built (every worker
     * logs its client's id once it is ready): a client of another program, or of another run, on this run's table or
     * key prefix. False when the event logs name no client (logs from before workers logged it).
     */
    boolean foreign(String holder) {
        int hash = holder.lastIndexOf('#');
        return !clientIds.isEmpty() && hash > 0 && !clientIds.contains(holder.substring(0, hash));
    }

    /**
     * An attempt that held some lock when {@code t} came (granted before it, neither released nor told lost by then,
     * its process still running), the earliest granted; null if nobody held anything. A fault on the whole server hits every such holder.
     */
    Attempt holderAt(long t) {
        Attempt first = null;
        for (Attempt a : attempts()) {
            if (a.ok() && a.outcomeT < t && Math.min(Math.min(a.releaseT, a.lostT), a.procEnd) >= t
                    && (first == null || a.outcomeT < first.outcomeT)) {
                first = a;
            }
        }
        return first;
    }

    /**
     * The attempt a {@code kill-waiter} fault hit, from the waiter's own history, or null: the attempt whose thread
     * the place in line named had asked for that lock before the kill and had no answer yet.
     */
    Attempt waiterHit(Scenario.Fault f) {
        Attempt a = f.holder() == null ? null : byKey.get(keyOf(f.holder()));
        if (a == null || !a.lock.equals(f.lock()) || a.invokeT >= f.start()
                || a.outcome != Outcome.NONE && a.outcomeT < f.start()) {
            return null;
        }
        return a;
    }

    /**
     * A process's attempt on a lock that was granted last before {@code t} (a worker runs one attempt at a
     * time), or null: the attempt a fault on a session holder hit, if any.
     */
    private Attempt grantedBefore(int worker, int generation, String lock, long t) {
        Attempt best = null;
        for (Attempt a : ofProcess(worker, generation, lock)) {
            if (a.ok() && a.outcomeT < t && (best == null || a.outcomeT > best.outcomeT)) {
                best = a;
            }
        }
        return best;
    }

    /**
     * Until when the server may still show this attempt's hold, from the attempt's own history: a failed
     * acquire never held; a release that returned freed the lock before it returned; an ambiguous acquire or
     * release discards the session (the server frees it when it sees the connection close); a dead process's
     * sessions end when the server sees its connections close. Ambiguous ends get the scenario's margin ({@link ScenarioSpec#margin})
     * of slack, or the end of a fault on the process (a cut-off connection closes when the path heals).
     */
    long holdUntil(Attempt a) {
        if (a.outcome == Outcome.FAIL) {
            return a.outcomeT;
        }
        long end = Long.MAX_VALUE;
        if (a.outcome == Outcome.INDETERMINATE) {
            end = settled(a, a.outcomeT);
        } else if (a.ok() && a.releaseOutT != Long.MAX_VALUE) {
            end = a.releasedOk && a.lostT == Long.MAX_VALUE ? a.releaseOutT : settled(a, a.releaseOutT);
        }
        if (a.procExit != Long.MAX_VALUE) {
            end = Math.min(end, settled(a, a.procExit));
        }
        return end;
    }

    private long settled(Attempt a, long t) {
        long end = t + r.spec().margin().toNanos();
        for (long[] window : faultWindows.getOrDefault(a.worker + "." + a.generation, List.of())) {
            if (window[0] <= t && t < window[1]) {
                end = Math.max(end, window[1]);
            }
        }
        return end;
    }

    /** Time from a release to the next grant of the same lock to an attempt that was already waiting. */
    List<Long> handOvers() {
        List<Long> out = new ArrayList<>();
        for (var entry : grantsPerLock().entrySet()) {
            List<Attempt> list = new ArrayList<>(entry.getValue());
            list.sort(Comparator.comparingLong(a -> a.outcomeT));
            for (int i = 0; i < list.size(); i++) {
                Attempt a = list.get(i);
                if (!a.releasedOk || a.lostT < a.releaseT || a.releaseT == Long.MAX_VALUE) {
                    continue;
                }
                for (int j = i + 1; j < list.size(); j++) {
                    Attempt b = list.get(j);
                    if (b.outcomeT > a.releaseT) {
                        if (b.invokeT < a.releaseT) {
                            out.add(ms(b.outcomeT - a.releaseT));
                        }
                        break;
                    }
                }
            }
        }
        return out;
    }
}
