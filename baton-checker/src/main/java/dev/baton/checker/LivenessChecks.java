package dev.baton.checker;

import dev.baton.LockInfo;
import dev.baton.checker.Analysis.Attempt;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.baton.checker.Findings.ms;

/**
 * The progress checks: (c) liveness (after a fault hit a holder, the next grant of its lock comes within the
 * strategy's bound + the margin whenever someone waited, every lock comes back after a fault on the whole server, and
 * no acquisition of a worker no fault touched ends in an error), counting the hits and lost-lease notices on the way;
 * (d) never stuck (the final probe gets every lock, nothing held or no server session left once the workers are
 * gone); and (f) dead places (a free lock with a live waiter behind a dead worker's place is granted within the
 * strategy's bound + the margin).
 */
final class LivenessChecks {
    private final Recorded in;

    LivenessChecks(Recorded in) {
        this.in = in;
    }

    /** (c); also counts hits and lost-lease notices. Returns {max recovery ms, bound ms}. */
    long[] checkLiveness(Map<String, Integer> hitsByMode, List<Long> lostNotices) {
        ScenarioSpec spec = in.spec();
        Scenario.Record r = in.record();
        Timeline timeline = in.timeline();
        long bound = spec.strategy().handOverBound(spec.leaseTime()).plus(spec.margin()).toNanos();
        long margin = spec.margin().toNanos();
        Map<String, String> rules = new TreeMap<>();
        long maxRecovery = -1;
        int measured = 0;
        int missed = 0;
        Map<String, List<Attempt>> grants = timeline.grantsPerLock();
        for (Scenario.Fault f : r.faults()) {
            if (f.kind().equals("kill-waiter")) {
                // a waiter owes nobody a hand-over: check (f) judges what its dead place does to the line
                if (timeline.waiterHit(f) != null) {
                    hitsByMode.merge(f.kind(), 1, Integer::sum);
                } else {
                    missed++;
                }
                continue;
            }
            Attempt hit = timeline.hitAttempt(f);
            if (hit == null) {
                Attempt other = ScenarioSpec.serverWide(f.kind()) ? timeline.holderAt(f.start()) : null;
                if (other == null) {
                    missed++;
                    continue;
                }
                // a fault on the whole server hits every holder: the one it aimed at had let go, another held; the
                // loop below owes every lock, the aimed-at one too, a grant from the fault's end
                hitsByMode.merge(f.kind(), 1, Integer::sum);
                CheckStrategy.HandOver due = spec.strategy().handOver("restart", f.mode(), spec.leaseTime());
                rules.put(f.kind(), rule(due));
                if (other.lostT != Long.MAX_VALUE) {
                    lostNotices.add(ms(other.lostT - f.start()));
                }
                continue;
            }
            hitsByMode.merge(f.kind().equals("partition") ? f.kind() + ":" + f.mode() : f.kind(), 1, Integer::sum);
            if (hit.lostT != Long.MAX_VALUE) {
                lostNotices.add(ms(hit.lostT - f.start()));
            }
            // a failover owes what a restart owes: every lock granted again once the deployment is back
            CheckStrategy.HandOver due = spec.strategy().handOver(ScenarioSpec.serverWide(f.kind()) ? "restart"
                    : f.kind(), f.mode(), spec.leaseTime());
            String kind = f.kind().equals("partition") ? f.kind() + " " + f.mode() : f.kind();
            rules.put(kind, rule(due));
            if (!due.due()) {
                continue;
            }
            long from = due.fromEnd() ? f.end() : f.start();
            long limit = due.bound().toNanos() + margin;
            long next = Long.MAX_VALUE;
            for (Attempt grant : grants.getOrDefault(f.lock(), List.of())) {
                if (grant != hit && grant.outcomeT > f.start()) {
                    next = Math.min(next, grant.outcomeT);
                }
            }
            long deadline = from + limit;
            if (next != Long.MAX_VALUE) {
                measured++;
                maxRecovery = Math.max(maxRecovery, Math.max(0, next - from));
            }
            if (next - from > limit && deadline < r.stopAt() && waiting(f.lock(), deadline, hit)) {
                in.violation("c", kind + " of w" + f.worker() + "." + f.generation() + " holding " + f.lock()
                        + " at " + in.at(f.start()) + (due.fromEnd() ? " until " + in.at(f.end()) : "") + ": next grant "
                        + (next == Long.MAX_VALUE ? "never came" : "after " + ms(next - from) + " ms")
                        + ", bound " + ms(limit) + " ms from the fault's " + (due.fromEnd() ? "end" : "start")
                        + ", while others waited");
            }
        }
        // a restart cuts every holder off at once: every lock, not only the target's, must be granted again
        for (Scenario.Fault f : r.faults()) {
            if (!ScenarioSpec.serverWide(f.kind())) {
                continue;
            }
            Attempt hit = timeline.hitAttempt(f);
            long limit = spec.strategy().handOver("restart", f.mode(), spec.leaseTime()).bound().toNanos() + margin;
            long deadline = f.end() + limit;
            for (String lock : new java.util.TreeSet<>(Scenario.lockNames(spec.locks()))) {
                if (hit != null && lock.equals(f.lock())) {
                    continue; // checked above
                }
                long next = Long.MAX_VALUE;
                for (Attempt grant : grants.getOrDefault(lock, List.of())) {
                    if (grant.outcomeT > f.start()) {
                        next = Math.min(next, grant.outcomeT);
                    }
                }
                if (next != Long.MAX_VALUE) {
                    measured++;
                    maxRecovery = Math.max(maxRecovery, Math.max(0, next - f.end()));
                }
                if (next - f.end() > limit && deadline < r.stopAt() && waiting(lock, deadline, null)) {
                    in.violation("c", f.kind() + " at " + in.at(f.start()) + " until " + in.at(f.end()) + ": next grant of " + lock
                            + (next == Long.MAX_VALUE ? " never came" : " after " + ms(next - f.end()) + " ms")
                            + ", bound " + ms(limit) + " ms from the server's return, while others waited");
                }
            }
        }
        int unfaultedErrors = 0;
        for (Attempt a : timeline.attempts()) {
            // an error after its process was told to stop (its client closed under it) is the checker's doing
            if (a.outcome == Outcome.INDETERMINATE && a.outcomeT < a.procEnd && !timeline.faulted(a, a.invokeT - margin, a.outcomeT)) {
                unfaultedErrors++;
                in.violation("c", "attempt " + a.id + " on " + a.lock + " failed at " + in.at(a.outcomeT) + " with an error"
                        + " while no fault touched its worker: " + a.error);
            }
        }
        rules.put("errors", unfaultedErrors + " acquisition(s) by a worker no fault touched ended in an error");
        StringBuilder rule = new StringBuilder();
        rules.forEach((k, v) -> rule.append("; ").append(k).append(": ").append(v));
        in.checkNote("c", measured + " hand-overs after a hit measured; " + missed + " fault(s) missed "
                + (spec.fault().equals("kill-waiter") ? "a waiter (it was granted first)"
                : "a holder (it released first or its sessions were already gone)") + "; bound " + ms(bound) + " ms = "
                + spec.strategy().handOverBound(spec.leaseTime()).toMillis() + " ms + margin "
                + spec.margin().toMillis() + " ms" + rule);
        return new long[] {maxRecovery < 0 ? -1 : ms(maxRecovery), ms(bound)};
    }

    private boolean waiting(String lock, long t, Attempt exclude) {
        for (Attempt a : in.timeline().attempts()) {
            if (a != exclude && lock.equals(a.lock) && a.invokeT < t
                    && (a.outcome == Outcome.NONE ? a.procEnd > t : a.outcomeT > t)
                    && (exclude == null || !(a.worker == exclude.worker && a.generation == exclude.generation))) {
                return true;
            }
        }
        return false;
    }

    /** (d) */
    void checkNeverStuck() {
        ScenarioSpec spec = in.spec();
        Scenario.Record r = in.record();
        long maxProbe = 0;
        for (Scenario.Probe p : r.probes()) {
            maxProbe = Math.max(maxProbe, p.millis());
            if (!p.acquired()) {
                in.violation("d", "probe could not acquire " + p.lock() + " after the workers stopped: " + p.message());
            }
        }
        for (LockInfo info : r.orphanRows()) {
            in.violation("d", info.name() + " still held by " + info.holder() + " (token " + info.fencingToken()
                    + ") after the probe");
        }
        if (r.orphanSessions() > 0) {
            in.violation("d", r.orphanSessions() + " server session(s) of stopped workers remain");
        }
        in.checkNote("d", "probe acquired " + r.probes().stream().filter(Scenario.Probe::acquired).count() + "/"
                + r.probes().size() + " locks, slowest " + maxProbe + " ms; orphan "
                + (spec.strategy().sessionKillEndsHolds() ? "holds " : "rows ") + r.orphanRows().size()
                + ", orphan sessions " + r.orphanSessions());
    }

    /**
     * (f) dead waiters, from the samples ({@link DeadPlaces}): a lock seen free while a live waiter stood behind the
     * place of a dead worker process must be granted within the strategy's bound + the margin. A window counts only if
     * no grant of that lock was reported within it and no fault touched the waiter's process meanwhile.
     */
    void checkDeadPlaces() {
        ScenarioSpec spec = in.spec();
        Scenario.Record r = in.record();
        Timeline timeline = in.timeline();
        java.util.Optional<java.time.Duration> bound = spec.strategy().deadPlaceBound(spec.leaseTime());
        if (bound.isEmpty()) {
            in.checkNote("f", "not checked: the strategy shows no line of waiters");
            return;
        }
        long limit = bound.get().plus(spec.margin()).toNanos();
        List<DeadPlaces.Look> looks = new ArrayList<>(r.samples().size());
        for (Scenario.Sample s : r.samples()) {
            looks.add(new DeadPlaces.Look(s.s0(), s.s1(), s.locks()));
        }
        Map<String, Long> ended = new HashMap<>();
        for (Scenario.Proc p : r.procs()) {
            ended.put(p.index + "." + p.gen, p.ended < 0 ? Long.MAX_VALUE : p.ended);
        }
        java.util.function.ToLongFunction<String> diedAt = owner -> Scenario.workerOf(owner)
                .map(w -> ended.getOrDefault(w.worker() + "." + w.generation(), Long.MAX_VALUE)).orElse(Long.MAX_VALUE);
        Map<String, List<Attempt>> grants = timeline.grantsPerLock();
        int windows = 0;
        long longest = -1;
        for (DeadPlaces.Window w : DeadPlaces.windows(looks, diedAt)) {
            if (w.lastS1() > r.stopAt()) {
                continue; // the workers were being stopped
            }
            boolean granted = false;
            for (Attempt g : grants.getOrDefault(w.lock(), List.of())) {
                if (g.outcomeT > w.firstS0() && g.outcomeT < w.lastS1()) {
                    granted = true;
                    break;
                }
            }
            java.util.Optional<Scenario.WorkerProcess> waiter = Scenario.workerOf(w.waiter());
            if (granted || waiter.isEmpty() || timeline.touched(waiter.get().worker(), waiter.get().generation(), w.firstS0(),
                    w.lastS1())) {
                continue;
            }
            windows++;
            longest = Math.max(longest, w.length());
            if (w.length() > limit) {
                in.violation("f", w.lock() + " free for " + ms(w.length()) + " ms (" + in.at(w.from()) + ".." + in.at(w.to())
                        + ", no grant) while live waiter " + w.waiter() + " stood behind the place(s) of dead "
                        + w.deadAhead() + "; bound " + ms(limit) + " ms");
            }
        }
        in.checkNote("f", windows + " time(s) a free lock had a live waiter behind a dead place, longest "
                + (longest < 0 ? "-" : ms(longest)) + " ms; bound " + ms(limit) + " ms = " + bound.get().toMillis()
                + " ms + margin " + spec.margin().toMillis() + " ms");
    }

    /** How a fault's hand-over is owed, as the report's rule line says it. */
    private static String rule(CheckStrategy.HandOver due) {
        return !due.due() ? "none due (" + due.why() + ")"
                : (due.fromEnd() ? "from its end" : "from its start") + " (" + due.why() + ")";
    }
}
