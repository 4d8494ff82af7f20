package dev.baton.checker;

import dev.baton.checker.Analysis.Result;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static dev.baton.checker.Analysis.errorKind;
import static dev.baton.checker.Analysis.keyOf;
import static dev.baton.checker.Findings.ms;

/**
 * The checks of {@code --strategy run-once} (see {@link JdbcRunOnceStrategy}), on the same (a)–(e), with its own
 * verdict: the calls are rebuilt from the workers' events and the runs from the resource's record; (a) no run starts
 * while a run granted less than atMostFor before still runs; (b) no run starts before the previous call +
 * atLeastFor; (c) a name reported taken had a call that could still hold it, and no call of an untouched worker ends
 * in an error; (d) never stuck, as for locks; (e) what a call returned matches whether its task ran.
 */
final class RunOnceChecks {
    /** Clock slack between the database's clock (grants) and the host's monotonic clock (the record). */
    private final long tol = TimeUnit.MILLISECONDS.toNanos(50);
    private final Map<String, RunCall> calls = new LinkedHashMap<>();
    private final Map<String, RunCall> byKey = new HashMap<>();

    private final Recorded in;
    private final LivenessChecks liveness;

    RunOnceChecks(Recorded in, LivenessChecks liveness) {
        this.in = in;
        this.liveness = liveness;
    }

    Result analyse() {
        ScenarioSpec spec = in.spec();
        Scenario.Record r = in.record();
        Timeline timeline = in.timeline();
        for (Scenario.Proc p : r.procs()) {
            for (Map<String, Object> e : Scenario.readEvents(p, in.findings().notes)) {
                String id = (String) e.get("a");
                if ("invoke".equals(e.get("type"))) {
                    timeline.countOp();
                }
                if (id == null || !"runOnce".equals(e.get("op"))) {
                    continue;
                }
                long t = (Long) e.get("t");
                if (e.get("type").equals("invoke")) {
                    RunCall c = new RunCall();
                    c.id = id;
                    c.worker = p.index;
                    c.generation = p.gen;
                    c.name = (String) e.get("lock");
                    c.tid = (Long) e.get("tid");
                    c.invokeT = t;
                    c.procEnd = p.ended < 0 ? Long.MAX_VALUE : p.ended;
                    calls.put(id, c);
                    byKey.put(c.key(), c);
                } else if (calls.containsKey(id)) {
                    RunCall c = calls.get(id);
                    c.outcome = Outcome.ofEventType((String) e.get("type"));
                    c.outcomeT = t;
                    c.ran = (Boolean) e.get("ran");
                    if (c.outcome == Outcome.INDETERMINATE && e.get("msg") instanceof String msg) {
                        c.error = msg;
                        if (t < c.procEnd) {
                            in.findings().errors.merge(errorKind(msg), 1, Integer::sum);
                        }
                    }
                }
            }
        }
        int unmatched = 0;
        for (ResourceServer.Access a : r.accesses()) {
            RunCall c = calls.get(a.attempt());
            if (c == null) {
                if (a.op().equals("run") || a.op().equals("done")) {
                    unmatched++;
                }
                continue;
            }
            if (a.op().equals("run")) {
                c.runT = Math.min(c.runT, a.nanos());
            } else if (a.op().equals("done")) {
                c.doneT = Math.min(c.doneT, a.nanos());
            }
        }
        long atMost = JdbcRunOnceStrategy.atMostFor(spec.leaseTime()).toNanos();
        long atLeast = JdbcRunOnceStrategy.atLeastFor(spec.leaseTime()).toNanos();
        Map<String, List<RunCall>> runs = new TreeMap<>();
        for (RunCall c : calls.values()) {
            if (c.runT != Long.MAX_VALUE) {
                runs.computeIfAbsent(c.name, k -> new ArrayList<>()).add(c);
            }
        }
        int overlaps = 0;
        int early = 0;
        long nRuns = 0;
        long liveBound = JdbcRunOnceStrategy.atMostFor(spec.leaseTime()).plus(spec.margin()).toNanos();
        long maxGap = -1;
        for (var entry : runs.entrySet()) {
            List<RunCall> list = entry.getValue();
            list.sort(Comparator.comparingLong(c -> c.runT));
            nRuns += list.size();
            for (int j = 0; j < list.size(); j++) {
                RunCall b = list.get(j);
                for (int i = j - 1; i >= 0; i--) {
                    RunCall a = list.get(i);
                    if (a.runT < b.runT - atMost) {
                        break; // it and every earlier run were called more than atMostFor before b started
                    }
                    if (b.runT < a.runEnd() && b.runT < a.invokeT + atMost - tol) {
                        overlaps++;
                        in.violation("a", entry.getKey() + ": run " + b.id + " started at " + in.at(b.runT) + " while run "
                                + a.id + " (called at " + in.at(a.invokeT) + ", so granted less than atMostFor "
                                + ms(atMost) + " ms before) was still running");
                    }
                }
                if (j > 0) {
                    RunCall a = list.get(j - 1);
                    if (b.runT < a.invokeT + atLeast - tol) {
                        early++;
                        in.violation("b", entry.getKey() + ": run " + b.id + " started " + ms(b.runT - a.invokeT)
                                + " ms after run " + a.id + " was called, before atLeastFor " + ms(atLeast) + " ms");
                    }
                }
            }
            for (int j = 0; j + 1 < list.size(); j++) {
                maxGap = Math.max(maxGap, list.get(j + 1).runT - list.get(j).runT);
            }
        }
        // (c): a name reported taken must have been taken by a call that could still hold it: one that was
        // under way (its grant lies between its call and its return or death) less than atMostFor before
        int stuck = 0;
        Map<String, List<RunCall>> perName = new TreeMap<>();
        for (RunCall c : calls.values()) {
            perName.computeIfAbsent(c.name, k -> new ArrayList<>()).add(c);
        }
        long slack = atMost + spec.margin().toNanos();
        for (RunCall c : calls.values()) {
            if (c.outcome != Outcome.OK || !Boolean.FALSE.equals(c.ran)) {
                continue;
            }
            boolean explained = false;
            for (RunCall d : perName.get(c.name)) {
                long end = d.outcome != Outcome.NONE ? d.outcomeT : d.procEnd;
                if (d != c && d.invokeT <= c.outcomeT && end >= c.invokeT - slack) {
                    explained = true;
                    break;
                }
            }
            if (!explained) {
                stuck++;
                in.violation("c", c.name + ": " + c.id + " found it taken at " + in.at(c.invokeT) + ".." + in.at(c.outcomeT)
                        + ", yet no call of it was under way in the atMostFor (" + ms(atMost) + " ms) + margin before");
            }
        }
        int ranFalse = 0;
        int notRun = 0;
        for (RunCall c : calls.values()) {
            if (c.outcome == Outcome.OK && Boolean.FALSE.equals(c.ran) && c.runT != Long.MAX_VALUE) {
                ranFalse++;
                in.violation("e", c.name + ": " + c.id + " returned false (not run) but its task ran at " + in.at(c.runT));
            }
            if (c.outcome == Outcome.OK && Boolean.TRUE.equals(c.ran) && c.runT == Long.MAX_VALUE) {
                notRun++;
                in.violation("e", c.name + ": " + c.id + " returned true but the resource never saw its task run");
            }
        }
        int unfaultedErrors = 0;
        for (RunCall c : calls.values()) {
            if (c.outcome == Outcome.INDETERMINATE && c.outcomeT < c.procEnd && !timeline.touched(c.worker, c.generation, c.invokeT - spec.margin().toNanos(), c.outcomeT)) {
                unfaultedErrors++;
                in.violation("c", c.name + ": " + c.id + " failed at " + in.at(c.outcomeT) + " with an error while no fault"
                        + " touched its worker: " + c.error);
            }
        }
        liveness.checkNeverStuck();
        Map<String, Integer> hitsByMode = new TreeMap<>();
        for (Scenario.Fault f : r.faults()) {
            RunCall c = byKey.get(f.holder() == null ? "" : keyOf(f.holder()));
            boolean inFlight = c != null && c.invokeT < f.start() && (c.outcome == Outcome.NONE || c.outcomeT > f.start());
            if (inFlight && !(f.kind().equals("session-kill") && f.effect() == 0)) {
                hitsByMode.merge(f.kind().equals("partition") ? f.kind() + ":" + f.mode() : f.kind(), 1,
                        Integer::sum);
            }
        }
        in.checkNote("a", nRuns + " runs; overlapping within atMostFor " + overlaps + " (atMostFor "
                + ms(atMost) + " ms)");
        in.checkNote("b", "started before the previous call + atLeastFor " + early + " (atLeastFor "
                + ms(atLeast) + " ms, slack " + ms(tol) + " ms)");
        in.checkNote("c", "found taken with no holder possible " + stuck + " (a name stays taken at most atMostFor"
                + " " + ms(atMost) + " ms after a grant, + margin); longest gap between runs of a name "
                + (maxGap < 0 ? "-" : ms(maxGap)) + " ms; calls by a worker no fault touched that ended in an error "
                + unfaultedErrors);
        in.checkNote("e", "returned false but ran " + ranFalse + ", returned true but never ran " + notRun
                + (unmatched > 0 ? ", runs of unknown calls " + unmatched : ""));
        in.findings().noteErrors("runOnce call(s)");
        int hits = hitsByMode.values().stream().mapToInt(Integer::intValue).sum();
        long skipped = calls.values().stream().filter(c -> Boolean.FALSE.equals(c.ran)).count();
        long unknown = calls.values().stream().filter(c -> c.outcome != Outcome.OK).count();
        int total = in.findings().violations.values().stream().mapToInt(Integer::intValue).sum();
        String scenario = spec.fault();
        String verdict;
        String reason;
        if (total > 0) {
            verdict = "FAIL";
            reason = total + " violation(s)";
        } else if (nRuns == 0) {
            verdict = "INCONCLUSIVE";
            reason = "no task ever ran";
        } else if (!scenario.equals("none") && hits < ScenarioSpec.minHits(scenario)) {
            verdict = "INCONCLUSIVE";
            reason = "only " + hits + " fault(s) hit a runner; at least " + ScenarioSpec.minHits(scenario)
                    + " are needed";
        } else {
            verdict = "PASS";
            reason = scenario.equals("none") ? "no violations (no faults injected)" : "no violations, " + hits + " hits";
        }
        Findings findings = in.findings();
        return new Result(r.backend(), r.backendName(), scenario, spec, verdict, reason, timeline.ops(),
                calls.size(), nRuns, skipped, unknown, r.accesses().size(), 0, r.faults().size(), hits, hitsByMode,
                findings.violations, findings.checkNotes, findings.details, maxGap < 0 ? -1 : ms(maxGap),
                ms(liveBound), -1, -1, -1, -1, 0, 0, 0, r.samples().size(), findings.notes);
    }

    /** One {@code runOnce} call and its run, rebuilt from its worker's events and the resource's record. */
    static final class RunCall {
        String id;
        /** The worker slot, and the generation (process) of it, that made the call. */
        int worker;
        int generation;
        String name;
        long tid;
        long invokeT;
        Outcome outcome = Outcome.NONE; // never FAIL: runOnce reports ok or info
        long outcomeT;
        Boolean ran;
        long runT = Long.MAX_VALUE;
        long doneT = Long.MAX_VALUE;
        long procEnd = Long.MAX_VALUE;
        String error;

        String key() {
            return "w" + worker + "." + generation + "#" + tid;
        }

        /** When the task stopped running: DONE, else its process's end, else never (as far as we know). */
        long runEnd() {
            return Math.min(doneT, procEnd);
        }
    }
}
