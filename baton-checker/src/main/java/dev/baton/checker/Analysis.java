package dev.baton.checker;

import dev.baton.LockInfo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Checks a scenario's record. Safety comes from the resource's access record and the workers' own
 * histories, never from what the fence decided or what the backend claims:
 * <ul>
 *   <li>(a) fenced exclusion: per lock, accepted accesses never go back to a lower token (so each token's
 *       accesses form one contiguous run), every accepted write is the counter + 1, and the final counter
 *       equals the number of accepted writes;</li>
 *   <li>(b) tokens: unique per lock, and if grant A completed before attempt B began, token(A) &lt; token(B);</li>
 *   <li>(c) liveness: after a fault hit a holder, the next grant of its lock comes within the strategy's
 *       bound plus the scenario's margin ({@link ScenarioSpec#margin}), counted from the fault's start or, where the strategy lets
 *       the holder keep the lock while the fault lasts, from its end ({@link CheckStrategy#handOver}),
 *       whenever someone was waiting for it;</li>
 *   <li>(d) never stuck: the final probe acquires every lock within its bound; no lock is left held and no
 *       server session of a worker remains once the workers are gone; and no lock is ever seen held by a
 *       server session of a worker process that had died more than the scenario's margin ({@link ScenarioSpec#margin}) before;</li>
 *   <li>(e) no double outcome: a holder the backend shows is an attempt that did not report failure and
 *       has the token it reported; an attempt that reported a grant, and has neither released, nor heard
 *       its lease was lost, nor been faulted, is the holder every sample shows; two attempts that were never
 *       faulted never believe they hold the same lock at once (and in scenarios without pause or partition,
 *       no two attempts ever do). Overlap involving a paused or cut-off holder is information: fencing is
 *       what makes it safe.</li>
 * </ul>
 * Where the backend shows a lock's holder as a server session (advisory and named locks), the sample names
 * a worker process, not an attempt: the attempt is the one of that process and lock whose own history
 * allows it to hold the lock at that time (see {@link #holdUntil}).
 */
final class Analysis {
    private static final int MAX_DETAILS = 8;

    /** One acquisition attempt, rebuilt from its worker's events. */
    static final class Attempt {
        String id;
        /** The worker slot, and the generation (process) of it, that made the attempt. */
        int worker;
        int generation;
        String lock;
        long tid = -1;
        long invokeT;
        Outcome outcome = Outcome.NONE;
        long outcomeT;
        long token = -1;
        long releaseT = Long.MAX_VALUE;
        boolean releasedOk;
        /** When the release reported its outcome (ok or info), or MAX_VALUE. */
        long releaseOutT = Long.MAX_VALUE;
        /** When the process was seen gone, or MAX_VALUE. */
        long procExit = Long.MAX_VALUE;
        long lostT = Long.MAX_VALUE;
        /** The message of the first lost notice, or null. */
        String lostMsg;
        long procEnd = Long.MAX_VALUE;
        /** The error an acquisition ended in (outcome info), or null. */
        String error;

        String key() {
            return "w" + worker + "." + generation + "#" + tid;
        }

        boolean ok() {
            return outcome == Outcome.OK;
        }

        /** When this attempt stopped believing it held the lock. */
        long beliefEnd() {
            return Math.min(Math.min(releaseT, lostT), procEnd);
        }
    }

    /** The verdict and figures of one scenario. */
    record Result(String backend, String backendName, String scenario, ScenarioSpec spec, String verdict,
                  String verdictReason, long ops, long attempts, long grants, long timeouts, long unknown,
                  long accesses, long staleRejected, int faultsInjected, int hits, Map<String, Integer> hitsByMode,
                  Map<String, Integer> violations, Map<String, String> checkNotes, List<String> details,
                  long maxRecoveryMs, long recoveryBoundMs, long handOverP50, long handOverP99, long lostNoticeP50,
                  long lostNoticeP99, int lostNotices, int overlaps, long overlapMs, int samples, List<String> notes) {
        int totalViolations() {
            return violations.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    private final Scenario.Record r;
    private final ScenarioSpec spec;
    private final Map<String, Attempt> byId = new LinkedHashMap<>();
    private final Map<String, Attempt> byKey = new HashMap<>();
    /** Attempts per worker process and lock ({@code worker.generation lock}), in the order they began. */
    private final Map<String, List<Attempt>> byProcLock = new HashMap<>();
    private final Map<String, Integer> violations = new LinkedHashMap<>();
    private final Map<String, String> checkNotes = new LinkedHashMap<>();
    private final List<String> details = new ArrayList<>();
    /** Every violation found, as {@code (check) detail}: the details keep at most {@value #MAX_DETAILS} per check. */
    private final List<String> allViolations = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final Map<String, List<long[]>> faultWindows = new HashMap<>();
    /** Acquisitions (or runOnce calls) that ended in an error, by message with its numbers masked. */
    private final Map<String, Integer> errors = new TreeMap<>();
    private long ops;

    Analysis(Scenario.Record r) {
        this.r = r;
        this.spec = r.spec();
        for (String c : List.of("a", "b", "c", "d", "e", "f")) {
            violations.put(c, 0);
        }
    }

    private void violation(String check, String detail) {
        violations.merge(check, 1, Integer::sum);
        allViolations.add("(" + check + ") " + detail);
        if (details.stream().filter(d -> d.startsWith("(" + check + ")")).count() < MAX_DETAILS) {
            details.add("(" + check + ") " + detail);
        }
    }

    /** The record analysed, for {@link HtmlReport}. */
    Scenario.Record record() {
        return r;
    }

    /** The acquisition attempts {@link #analyse} rebuilt, in the order they were read. */
    List<Attempt> attempts() {
        return List.copyOf(byId.values());
    }

    /** Every violation {@link #analyse} found, as {@code (check) detail}, none left out. */
    List<String> allViolations() {
        return List.copyOf(allViolations);
    }

    /** Whether a fault hit a holder, after {@link #analyse}. */
    boolean hit(Scenario.Fault f) {
        return hitAttempt(f) != null;
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private String at(long nanos) {
        return String.format("t+%.3fs", (nanos - r.runStart()) / 1e9);
    }

    Result analyse() {
        String scenario = spec.fault();
        if (r.notApplicable().isPresent()) {
            String na = r.notApplicable().get();
            return new Result(r.backend(), r.backendName(), scenario, spec, na.contains(" refused --pool ") ? "REFUSED"
                    : "N/A", na, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, Map.of(), Map.of(), Map.of(), List.of(), 0, 0, -1, -1, -1, -1, 0, 0, 0, 0,
                    List.of());
        }
        notes.addAll(r.notes());
        rebuildAttempts();
        long lease = spec.leaseTime().toNanos();
        long margin = spec.margin().toNanos();
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
        if (spec.strategy() instanceof JdbcRunOnceStrategy) {
            return new RunOnceChecks().analyse();
        }
        checkFencedExclusion();
        checkTokens();
        checkFailovers();
        Map<String, Integer> hitsByMode = new TreeMap<>();
        List<Long> lostNotices = new ArrayList<>();
        long[] recovery = checkLiveness(hitsByMode, lostNotices);
        checkNeverStuck();
        checkDeadPlaces();
        long[] overlap = checkOutcomes();
        List<Long> handOvers = handOvers();

        long attempts = byId.size();
        long grants = byId.values().stream().filter(Attempt::ok).count();
        long timeouts = byId.values().stream().filter(a -> a.outcome == Outcome.FAIL).count();
        long unknown = byId.values().stream()
                .filter(a -> a.outcome == Outcome.NONE || a.outcome == Outcome.INDETERMINATE).count();
        long stale = r.accesses().stream().filter(a -> !a.accepted()).count();
        int hits = hitsByMode.values().stream().mapToInt(Integer::intValue).sum();
        int total = violations.values().stream().mapToInt(Integer::intValue).sum();
        String verdict;
        String reason;
        if (total > 0) {
            verdict = "FAIL";
            reason = total + " violation(s)";
        } else if (grants == 0) {
            verdict = "INCONCLUSIVE";
            reason = "no lock was ever granted";
        } else if (!scenario.equals("none") && hits < ScenarioSpec.minHits(scenario)) {
            verdict = "INCONCLUSIVE";
            reason = "only " + hits + " fault(s) hit a " + (scenario.equals("kill-waiter") ? "waiter" : "holder")
                    + "; at least " + ScenarioSpec.minHits(scenario)
                    + " are needed";
        } else {
            verdict = "PASS";
            reason = scenario.equals("none") ? "no violations (no faults injected)" : "no violations, " + hits + " hits";
        }
        noteErrors("acquisition(s)");
        lostNotices.sort(null);
        handOvers.sort(null);
        return new Result(r.backend(), r.backendName(), scenario, spec, verdict, reason, ops, attempts, grants, timeouts,
                unknown, r.accesses().size(), stale, r.faults().size(), hits, hitsByMode, violations, checkNotes,
                details, recovery[0], recovery[1], pct(handOvers, 50), pct(handOvers, 99), pct(lostNotices, 50),
                pct(lostNotices, 99), lostNotices.size(), (int) overlap[0], overlap[1], r.samples().size(), notes);
    }

    /** A message with its numbers masked, so errors of one kind count together. */
    static String errorKind(String msg) {
        String m = msg.replaceAll("\\d+", "N");
        return m.length() > 200 ? m.substring(0, 200) + "…" : m;
    }

    /** Notes the commonest errors: a strategy that fails half its calls may still be safe, but it should show. */
    private void noteErrors(String what) {
        errors.entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(3)
                .forEach(e -> notes.add(e.getValue() + " " + what + " failed with: " + e.getKey()));
    }

    private static long pct(List<Long> sorted, int p) {
        if (sorted.isEmpty()) {
            return -1;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private void rebuildAttempts() {
        for (Scenario.Proc p : r.procs()) {
            for (Map<String, Object> e : Scenario.readEvents(p, notes)) {
                String type = (String) e.get("type");
                String op = (String) e.get("op");
                String id = (String) e.get("a");
                long t = (Long) e.get("t");
                if ("invoke".equals(type)) {
                    ops++;
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
                                errors.merge(errorKind(msg), 1, Integer::sum);
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
                        }
                    }
                    default -> {
                        // resource accesses are judged from the resource's own record
                    }
                }
            }
        }
    }

    private boolean faulted(Attempt a, long from, long to) {
        return touched(a.worker, a.generation, from, to);
    }

    /** Whether a fault window of worker process {@code worker.generation} overlaps [from, to). */
    private boolean touched(int worker, int generation, long from, long to) {
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

    /** (a) from the resource's record, in the order it decided. */
    private void checkFencedExclusion() {
        Map<String, List<ResourceServer.Access>> perLock = new TreeMap<>();
        for (ResourceServer.Access a : r.accesses()) {
            perLock.computeIfAbsent(a.lock(), k -> new ArrayList<>()).add(a);
        }
        long staleAccepted = 0;
        long splitRuns = 0;
        long badWrites = 0;
        long acceptedWrites = 0;
        for (var entry : perLock.entrySet()) {
            long maxToken = Long.MIN_VALUE;
            long lastToken = Long.MIN_VALUE;
            java.util.Set<Long> finishedRuns = new java.util.HashSet<>();
            long counter = 0;
            long writes = 0;
            for (ResourceServer.Access a : entry.getValue()) {
                if (!a.accepted()) {
                    continue;
                }
                if (a.token() < maxToken) {
                    staleAccepted++;
                    violation("a", entry.getKey() + ": " + a.op() + " by " + a.attempt() + " with token " + a.token()
                            + " accepted after token " + maxToken + " (" + at(a.nanos()) + ")");
                }
                if (a.token() != lastToken) {
                    if (finishedRuns.contains(a.token())) {
                        splitRuns++;
                    }
                    if (lastToken != Long.MIN_VALUE) {
                        finishedRuns.add(lastToken);
                    }
                    lastToken = a.token();
                }
                maxToken = Math.max(maxToken, a.token());
                if (a.op().equals("write")) {
                    writes++;
                    if (a.value() != counter + 1) {
                        badWrites++;
                        violation("a", entry.getKey() + ": write of " + a.value() + " by " + a.attempt() + " (token "
                                + a.token() + ") over counter " + counter + ": an update was lost or repeated ("
                                + at(a.nanos()) + ")");
                    }
                    counter = a.value();
                }
            }
            acceptedWrites += writes;
            long finalCounter = r.counters().getOrDefault(entry.getKey(), 0L);
            if (finalCounter != writes) {
                violation("a", entry.getKey() + ": final counter " + finalCounter + " but " + writes
                        + " accepted increments");
            }
        }
        checkNotes.put("a", "stale accepted " + staleAccepted + ", split token runs " + splitRuns
                + ", lost/repeated updates " + badWrites + ", " + acceptedWrites + " accepted increments = counters "
                + r.counters().values());
    }

    /** (b) from the grants the workers reported. */
    private void checkTokens() {
        Map<String, List<Attempt>> perLock = grantsPerLock();
        int n = 0;
        for (var entry : perLock.entrySet()) {
            Map<Long, Attempt> seen = new HashMap<>();
            for (Attempt a : entry.getValue()) {
                n++;
                Attempt other = seen.put(a.token, a);
                if (other != null) {
                    violation("b", entry.getKey() + ": token " + a.token + " granted to both " + other.id + " and " + a.id);
                }
            }
            List<Attempt> byOk = new ArrayList<>(entry.getValue());
            byOk.sort(Comparator.comparingLong(a -> a.outcomeT));
            List<Attempt> byInvoke = new ArrayList<>(entry.getValue());
            byInvoke.sort(Comparator.comparingLong(a -> a.invokeT));
            int i = 0;
            Attempt maxBefore = null;
            for (Attempt b : byInvoke) {
                while (i < byOk.size() && byOk.get(i).outcomeT < b.invokeT) {
                    Attempt c = byOk.get(i++);
                    if (maxBefore == null || c.token > maxBefore.token) {
                        maxBefore = c;
                    }
                }
                if (maxBefore != null && maxBefore.token >= b.token) {
                    violation("b", entry.getKey() + ": " + b.id + " began after " + maxBefore.id + " was granted token "
                            + maxBefore.token + " yet got token " + b.token + " (" + at(b.invokeT) + ")");
                }
            }
        }
        checkNotes.put("b", n + " grants, tokens unique per lock and in real-time order unless listed");
    }

    /**
     * For each failover: the tokens of grants begun after it against every token granted before it (check (b) counts
     * a token that is not above as a violation), the time from the kill to the first grant of any lock, and what
     * became of the holders at the kill (kept their lock, told it was lost, or neither — check (e) counts a holder
     * that still believed while another was granted its lock).
     */
    private void checkFailovers() {
        Map<String, List<Attempt>> perLock = grantsPerLock();
        StringBuilder note = new StringBuilder();
        for (Scenario.Fault f : r.faults()) {
            if (!f.kind().equals("failover") && !f.kind().equals("switchover")) {
                continue;
            }
            long highestBefore = -1;
            long lowestAfter = Long.MAX_VALUE;
            long firstGrant = Long.MAX_VALUE;
            int holders = 0;
            int kept = 0;
            int told = 0;
            int releaseFailed = 0;
            int neither = 0;
            for (List<Attempt> grants : perLock.values()) {
                for (Attempt a : grants) {
                    if (a.outcomeT < f.start()) {
                        highestBefore = Math.max(highestBefore, a.token);
                        if (a.beliefEnd() > f.start()) {
                            holders++;
                            if (a.lostT != Long.MAX_VALUE) {
                                told++;
                            } else if (a.releasedOk) {
                                kept++;
                            } else if (a.releaseOutT != Long.MAX_VALUE) {
                                releaseFailed++; // its release reported an error: it knows its hold was unconfirmed
                            } else {
                                neither++;
                            }
                        }
                    } else if (a.invokeT > f.start()) {
                        firstGrant = Math.min(firstGrant, a.outcomeT);
                        lowestAfter = Math.min(lowestAfter, a.token);
                    }
                }
            }
            note.append(note.length() == 0 ? "" : "; ").append(f.kind()).append(" at ").append(at(f.start()))
                    .append(" (").append(f.mode()).append("): first grant ")
                    .append(firstGrant == Long.MAX_VALUE ? "never came" : ms(firstGrant - f.start()) + " ms after the kill")
                    .append(" (of an attempt begun after it)")
                    .append(", deployment whole after ").append(ms(f.end() - f.start())).append(" ms; highest token")
                    .append(" before ").append(highestBefore).append(", lowest begun after ")
                    .append(lowestAfter == Long.MAX_VALUE ? "none" : lowestAfter)
                    .append(lowestAfter == Long.MAX_VALUE || lowestAfter > highestBefore ? " (above)" : " (NOT above)")
                    .append("; holders at the kill ").append(holders).append(": kept their lock ").append(kept)
                    .append(", told it was lost ").append(told).append(", release failed ").append(releaseFailed)
                    .append(", none of these (ended with its process) ").append(neither);
        }
        if (note.length() > 0) {
            checkNotes.put("failover", note.toString());
            notes.add(note.toString());
        }
    }

    private Map<String, List<Attempt>> grantsPerLock() {
        Map<String, List<Attempt>> perLock = new TreeMap<>();
        for (Attempt a : byId.values()) {
            if (a.ok()) {
                perLock.computeIfAbsent(a.lock, k -> new ArrayList<>()).add(a);
            }
        }
        return perLock;
    }

    /** Whether the fault hit a holder, from the holder's own history; the attempt if so. */
    private Attempt hitAttempt(Scenario.Fault f) {
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
     * The attempt a {@code kill-waiter} fault hit, from the waiter's own history, or null: the attempt whose thread
     * the place in line named had asked for that lock before the kill and had no answer yet.
     */
    private Attempt waiterHit(Scenario.Fault f) {
        Attempt a = f.holder() == null ? null : byKey.get(keyOf(f.holder()));
        if (a == null || !a.lock.equals(f.lock()) || a.invokeT >= f.start()
                || a.outcome != Outcome.NONE && a.outcomeT < f.start()) {
            return null;
        }
        return a;
    }

    /**
     * (f) dead waiters, from the samples ({@link DeadPlaces}): a lock seen free while a live waiter stood behind the
     * place of a dead worker process must be granted within the strategy's bound + the margin. A window counts only if
     * no grant of that lock was reported within it and no fault touched the waiter's process meanwhile.
     */
    private void checkDeadPlaces() {
        java.util.Optional<java.time.Duration> bound = spec.strategy().deadPlaceBound(spec.leaseTime());
        if (bound.isEmpty()) {
            checkNotes.put("f", "not checked: the strategy shows no line of waiters");
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
        Map<String, List<Attempt>> grants = grantsPerLock();
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
            if (granted || waiter.isEmpty() || touched(waiter.get().worker(), waiter.get().generation(), w.firstS0(),
                    w.lastS1())) {
                continue;
            }
            windows++;
            longest = Math.max(longest, w.length());
            if (w.length() > limit) {
                violation("f", w.lock() + " free for " + ms(w.length()) + " ms (" + at(w.from()) + ".." + at(w.to())
                        + ", no grant) while live waiter " + w.waiter() + " stood behind the place(s) of dead "
                        + w.deadAhead() + "; bound " + ms(limit) + " ms");
            }
        }
        checkNotes.put("f", windows + " time(s) a free lock had a live waiter behind a dead place, longest "
                + (longest < 0 ? "-" : ms(longest)) + " ms; bound " + ms(limit) + " ms = " + bound.get().toMillis()
                + " ms + margin " + spec.margin().toMillis() + " ms");
    }

    /** How many times check (f) saw a free lock with a live waiter behind a dead place (0 if it did not run). */
    static int deadPlaceWindows(Result result) {
        String note = result.checkNotes().getOrDefault("f", "");
        return note.isEmpty() || !Character.isDigit(note.charAt(0)) ? 0 : Integer.parseInt(note.substring(0, note.indexOf(' ')));
    }

    /**
     * A process's attempt on a lock that was granted last before {@code t} (a worker runs one attempt at a
     * time), or null: the attempt a fault on a session holder hit, if any.
     */
    private Attempt grantedBefore(int worker, int generation, String lock, long t) {
        Attempt best = null;
        for (Attempt a : byProcLock.getOrDefault(worker + "." + generation + " " + lock, List.of())) {
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
    private long holdUntil(Attempt a) {
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
        long end = t + spec.margin().toNanos();
        for (long[] window : faultWindows.getOrDefault(a.worker + "." + a.generation, List.of())) {
            if (window[0] <= t && t < window[1]) {
                end = Math.max(end, window[1]);
            }
        }
        return end;
    }

    static String keyOf(String holder) {
        int slash = holder.indexOf('/');
        int hash = holder.lastIndexOf('#');
        if (slash < 0 || hash < 0) {
            return holder;
        }
        return holder.substring(0, slash) + holder.substring(hash);
    }

    /** (c); also counts hits and lost-lease notices. Returns {max recovery ms, bound ms}. */
    private long[] checkLiveness(Map<String, Integer> hitsByMode, List<Long> lostNotices) {
        long bound = spec.strategy().handOverBound(spec.leaseTime()).plus(spec.margin()).toNanos();
        long margin = spec.margin().toNanos();
        Map<String, String> rules = new TreeMap<>();
        long maxRecovery = -1;
        int measured = 0;
        int missed = 0;
        Map<String, List<Attempt>> grants = grantsPerLock();
        for (Scenario.Fault f : r.faults()) {
            if (f.kind().equals("kill-waiter")) {
                // a waiter owes nobody a hand-over: check (f) judges what its dead place does to the line
                if (waiterHit(f) != null) {
                    hitsByMode.merge(f.kind(), 1, Integer::sum);
                } else {
                    missed++;
                }
                continue;
            }
            Attempt hit = hitAttempt(f);
            if (hit == null) {
                missed++;
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
            rules.put(kind, !due.due() ? "none due (" + due.why() + ")"
                    : (due.fromEnd() ? "from its end" : "from its start") + " (" + due.why() + ")");
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
                violation("c", kind + " of w" + f.worker() + "." + f.generation() + " holding " + f.lock()
                        + " at " + at(f.start()) + (due.fromEnd() ? " until " + at(f.end()) : "") + ": next grant "
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
            Attempt hit = hitAttempt(f);
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
                    violation("c", f.kind() + " at " + at(f.start()) + " until " + at(f.end()) + ": next grant of " + lock
                            + (next == Long.MAX_VALUE ? " never came" : " after " + ms(next - f.end()) + " ms")
                            + ", bound " + ms(limit) + " ms from the server's return, while others waited");
                }
            }
        }
        int unfaultedErrors = 0;
        for (Attempt a : byId.values()) {
            // an error after its process was told to stop (its client closed under it) is the checker's doing
            if (a.outcome == Outcome.INDETERMINATE && a.outcomeT < a.procEnd && !faulted(a, a.invokeT - margin, a.outcomeT)) {
                unfaultedErrors++;
                violation("c", "attempt " + a.id + " on " + a.lock + " failed at " + at(a.outcomeT) + " with an error"
                        + " while no fault touched its worker: " + a.error);
            }
        }
        rules.put("errors", unfaultedErrors + " acquisition(s) by a worker no fault touched ended in an error");
        StringBuilder rule = new StringBuilder();
        rules.forEach((k, v) -> rule.append("; ").append(k).append(": ").append(v));
        checkNotes.put("c", measured + " hand-overs after a hit measured; " + missed + " fault(s) missed "
                + (spec.fault().equals("kill-waiter") ? "a waiter (it was granted first)"
                : "a holder (it released first or its sessions were already gone)") + "; bound " + ms(bound) + " ms = "
                + spec.strategy().handOverBound(spec.leaseTime()).toMillis() + " ms + margin "
                + spec.margin().toMillis() + " ms" + rule);
        return new long[] {maxRecovery < 0 ? -1 : ms(maxRecovery), ms(bound)};
    }

    private boolean waiting(String lock, long t, Attempt exclude) {
        for (Attempt a : byId.values()) {
            if (a != exclude && lock.equals(a.lock) && a.invokeT < t
                    && (a.outcome == Outcome.NONE ? a.procEnd > t : a.outcomeT > t)
                    && (exclude == null || !(a.worker == exclude.worker && a.generation == exclude.generation))) {
                return true;
            }
        }
        return false;
    }

    /** (d) */
    private void checkNeverStuck() {
        long maxProbe = 0;
        for (Scenario.Probe p : r.probes()) {
            maxProbe = Math.max(maxProbe, p.millis());
            if (!p.acquired()) {
                violation("d", "probe could not acquire " + p.lock() + " after the workers stopped: " + p.message());
            }
        }
        for (LockInfo info : r.orphanRows()) {
            violation("d", info.name() + " still held by " + info.holder() + " (token " + info.fencingToken()
                    + ") after the probe");
        }
        if (r.orphanSessions() > 0) {
            violation("d", r.orphanSessions() + " server session(s) of stopped workers remain");
        }
        checkNotes.put("d", "probe acquired " + r.probes().stream().filter(Scenario.Probe::acquired).count() + "/"
                + r.probes().size() + " locks, slowest " + maxProbe + " ms; orphan "
                + (spec.strategy().sessionKillEndsHolds() ? "holds " : "rows ") + r.orphanRows().size()
                + ", orphan sessions " + r.orphanSessions());
    }

    /** (e) and belief overlap. Returns {overlaps counted as information, their total ms}. */
    private long[] checkOutcomes() {
        int seenFailed = 0;
        int seenFailedCutOff = 0;
        int deadHolders = 0;
        int wrongToken = 0;
        int unknownHolder = 0;
        int notSeen = 0;
        List<Scenario.Sample> samples = r.samples();
        for (Scenario.Sample s : samples) {
            for (LockInfo info : s.locks()) {
                if (!info.held() || info.holder() == null || Scenario.workerOf(info.holder()).isEmpty()) {
                    continue;
                }
                if (Scenario.isSessionHolder(info.holder())) {
                    Scenario.WorkerProcess holder = Scenario.workerOf(info.holder()).orElseThrow();
                    Attempt any = null;
                    Attempt failed = null;
                    for (Attempt c : byProcLock.getOrDefault(holder.worker() + "." + holder.generation() + " " + info.name(), List.of())) {
                        if (c.invokeT < s.s1() && holdUntil(c) > s.s0()) {
                            if (c.outcome == Outcome.FAIL) {
                                failed = c;
                            } else {
                                any = c;
                            }
                        }
                    }
                    long exit = procExit(holder.worker(), holder.generation());
                    if (any != null) {
                        continue;
                    }
                    if (exit != Long.MAX_VALUE && s.s0() - exit > spec.margin().toNanos()) {
                        deadHolders++;
                        violation("d", info.name() + " held by a session of w" + holder.worker() + "." + holder.generation() + " at " + at(s.s1())
                                + ", " + ms(s.s0() - exit) + " ms after that process had died (" + info.holder() + ")");
                    } else if (failed != null) {
                        seenFailed++;
                        violation("e", "attempt " + failed.id + " reported failure at " + at(failed.outcomeT)
                                + " but the backend showed its process's session holding " + info.name() + " at "
                                + at(s.s1()) + " (" + info.holder() + ")");
                    } else {
                        unknownHolder++;
                        violation("e", info.name() + " held by " + info.holder() + " at " + at(s.s0()) + ".."
                                + at(s.s1()) + ", when no attempt of that process could hold it by its own history");
                    }
                    continue;
                }
                Attempt a = byKey.get(keyOf(info.holder()));
                if (a == null) {
                    unknownHolder++;
                    violation("e", info.name() + " held by " + info.holder() + " at " + at(s.s1())
                            + ", which matches no attempt in the workers' histories");
                } else if (a.outcome == Outcome.FAIL && (spec.fault().equals("failover") || spec.fault().equals("switchover"))
                        && faulted(a, s.s0(), s.s1())) {
                    // a waiter cut off from the deployment while its leader was replaced (its server was the one
                    // killed): the others kept serving and made its place the head, which it could neither learn nor
                    // withdraw before its wait ran out; nobody believed it held the lock, and its place goes with its
                    // session or its withdrawal once it is back
                    seenFailedCutOff++;
                } else if (a.outcome == Outcome.FAIL) {
                    seenFailed++;
                    violation("e", "attempt " + a.id + " reported failure at " + at(a.outcomeT)
                            + " but the backend showed it holding " + info.name() + " at " + at(s.s1()));
                } else if (a.ok() && info.fencingToken() >= 0 && a.token != info.fencingToken()) {
                    wrongToken++;
                    violation("e", "attempt " + a.id + " reported token " + a.token + " but the backend showed token "
                            + info.fencingToken() + " at " + at(s.s1()));
                }
            }
        }
        for (Attempt a : byId.values()) {
            if (!a.ok() || faulted(a, a.outcomeT, a.beliefEnd())) {
                continue;
            }
            int lo = firstSampleAfter(samples, a.outcomeT);
            for (int i = lo; i < samples.size(); i++) {
                Scenario.Sample s = samples.get(i);
                if (s.s1() >= a.beliefEnd()) {
                    break;
                }
                LockInfo shown = s.locks().stream().filter(l -> l.name().equals(a.lock)).findFirst().orElse(null);
                boolean ours = shown != null && shown.held() && shown.holder() != null
                        && (Scenario.isSessionHolder(shown.holder())
                        ? Scenario.workerOf(shown.holder()).equals(Optional.of(new Scenario.WorkerProcess(a.worker, a.generation)))
                        : keyOf(shown.holder()).equals(a.key()))
                        && (shown.fencingToken() < 0 || shown.fencingToken() == a.token);
                if (!ours) {
                    notSeen++;
                    violation("e", "attempt " + a.id + " was granted " + a.lock + " (token " + a.token + ") at "
                            + at(a.outcomeT) + " and still held it, unfaulted, but the backend showed "
                            + (shown == null ? "no row" : shown.held() ? shown.holder() + " token " + shown.fencingToken()
                            : "it free") + " at " + at(s.s0()) + ".." + at(s.s1()));
                    break;
                }
            }
        }
        // belief overlap: a paused or cut-off holder may believe past its hold; so may one whose sessions were
        // killed, where the holds end with the session (it hears so at its next renewal probe)
        boolean faultsThatStall = spec.fault().equals("pause") || spec.fault().equals("partition")
                || spec.fault().equals("restart") || (spec.fault().equals("session-kill") && spec.strategy().sessionKillEndsHolds());
        int infoOverlaps = 0;
        long infoMs = 0;
        int badOverlaps = 0;
        int lateNotices = 0;
        for (var entry : grantsPerLock().entrySet()) {
            List<Attempt> list = new ArrayList<>(entry.getValue());
            list.sort(Comparator.comparingLong(a -> a.outcomeT));
            for (int i = 0; i < list.size(); i++) {
                Attempt a = list.get(i);
                for (int j = i + 1; j < list.size() && list.get(j).outcomeT < a.beliefEnd(); j++) {
                    Attempt b = list.get(j);
                    long from = b.outcomeT;
                    long to = Math.min(a.beliefEnd(), b.beliefEnd());
                    if (to <= from) {
                        continue;
                    }
                    boolean explained = faultsThatStall && (faulted(a, from, to) || faulted(b, from, to));
                    if (!explained && endedByDeadlineNotice(a, to)
                            && lateDeadlineNotice(a.lostMsg, to - from, spec.leaseTime(), spec.margin())) {
                        lateNotices++;
                        explained = true;
                    }
                    if (explained) {
                        infoOverlaps++;
                        infoMs += ms(to - from);
                    } else {
                        badOverlaps++;
                        violation("e", entry.getKey() + ": " + a.id + " (token " + a.token + ") and " + b.id + " (token "
                                + b.token + ") both believed they held it for " + ms(to - from) + " ms from " + at(from)
                                + (faultsThatStall ? ", neither of them faulted" : ""));
                    }
                }
            }
        }
        if (spec.strategy().sessionKillEndsHolds()) {
            checkNotes.put("d", checkNotes.get("d") + "; samples showing a lock held by a dead worker's session "
                    + deadHolders);
        }
        checkNotes.put("e", samples.size() + " samples; failed-seen-as-owner " + seenFailed + ", wrong token "
                + wrongToken + ", unknown holder " + unknownHolder + ", granted-but-not-shown " + notSeen
                + ", unexplained belief overlap " + badOverlaps
                + (seenFailedCutOff > 0 ? ", failed-seen-as-owner while cut off by the failover (information) "
                + seenFailedCutOff : "")
                + (lateNotices > 0 ? ", overlaps ended by a deadline's late lost notice " + lateNotices : ""));
        return new long[] {infoOverlaps, infoMs};
    }

    /**
     * Whether an overlap of beliefs is only the lag of an asynchronous lost notice: the earlier holder's lease ended at
     * its own local deadline (its renewals failed: the core's watchdog says "no successful renewal before its
     * deadline"), after which {@code isValid()} was already false; the notice ({@code onLost}, what the worker logs)
     * comes up to one watchdog tick later (the core checks deadlines every lease/20, at least 5 ms and at most
     * 250 ms), plus {@link #NOTICE_SCHEDULING} — and never more than the scenario's margin. The core gives the same
     * reason when a release or a renewal's answer finds the deadline already passed (before the watchdog looked). A
     * loss found by a renewal or {@code checkValid()} before the deadline (the server shows another grant) is never
     * excused: the holder believed in a hold the server had given away.
     */
    static boolean lateDeadlineNotice(String lostMsg, long overlapNanos, java.time.Duration lease, java.time.Duration margin) {
        long tick = Math.max(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(5),
                Math.min(lease.toNanos() / 20, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(250)));
        long bound = Math.min(margin.toNanos(), tick + NOTICE_SCHEDULING.toNanos());
        return lostMsg != null && lostMsg.contains("no successful renewal before its deadline") && overlapNanos <= bound;
    }

    /**
     * Whether {@code a}'s belief ended at {@code to} with the core's notice of a lost lease: the notice itself, or a
     * release during which the core found the deadline already passed and reported the loss (its listeners run on
     * the releasing thread, so the worker logs the release's invoke first, then the notice, then the release's
     * outcome).
     */
    static boolean endedByDeadlineNotice(Attempt a, long to) {
        return to == a.lostT || (to == a.releaseT && a.lostT != Long.MAX_VALUE && a.lostT <= a.releaseOutT);
    }

    /** What a loaded machine may add to a lost notice beyond the watchdog's tick (thread scheduling, the log write). */
    static final java.time.Duration NOTICE_SCHEDULING = java.time.Duration.ofMillis(100);

    private long procExit(int worker, int generation) {
        for (Scenario.Proc p : r.procs()) {
            if (p.index == worker && p.gen == generation) {
                return p.exited >= 0 ? p.exited : p.ended >= 0 ? p.ended : Long.MAX_VALUE;
            }
        }
        return Long.MAX_VALUE;
    }

    private static int firstSampleAfter(List<Scenario.Sample> samples, long t) {
        int lo = 0;
        int hi = samples.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (samples.get(mid).s0() <= t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Time from a release to the next grant of the same lock to an attempt that was already waiting. */
    private List<Long> handOvers() {
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

    /** The checks of {@code --strategy run-once} (see {@link JdbcRunOnceStrategy}), on the same (a)–(e). */
    private final class RunOnceChecks {
        /** Clock slack between the database's clock (grants) and the host's monotonic clock (the record). */
        private final long tol = TimeUnit.MILLISECONDS.toNanos(50);
        private final Map<String, RunCall> calls = new LinkedHashMap<>();
        private final Map<String, RunCall> byKey = new HashMap<>();

        Result analyse() {
            for (Scenario.Proc p : r.procs()) {
                for (Map<String, Object> e : Scenario.readEvents(p, notes)) {
                    String id = (String) e.get("a");
                    if ("invoke".equals(e.get("type"))) {
                        ops++;
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
                                errors.merge(errorKind(msg), 1, Integer::sum);
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
                            violation("a", entry.getKey() + ": run " + b.id + " started at " + at(b.runT) + " while run "
                                    + a.id + " (called at " + at(a.invokeT) + ", so granted less than atMostFor "
                                    + ms(atMost) + " ms before) was still running");
                        }
                    }
                    if (j > 0) {
                        RunCall a = list.get(j - 1);
                        if (b.runT < a.invokeT + atLeast - tol) {
                            early++;
                            violation("b", entry.getKey() + ": run " + b.id + " started " + ms(b.runT - a.invokeT)
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
                    violation("c", c.name + ": " + c.id + " found it taken at " + at(c.invokeT) + ".." + at(c.outcomeT)
                            + ", yet no call of it was under way in the atMostFor (" + ms(atMost) + " ms) + margin before");
                }
            }
            int ranFalse = 0;
            int notRun = 0;
            for (RunCall c : calls.values()) {
                if (c.outcome == Outcome.OK && Boolean.FALSE.equals(c.ran) && c.runT != Long.MAX_VALUE) {
                    ranFalse++;
                    violation("e", c.name + ": " + c.id + " returned false (not run) but its task ran at " + at(c.runT));
                }
                if (c.outcome == Outcome.OK && Boolean.TRUE.equals(c.ran) && c.runT == Long.MAX_VALUE) {
                    notRun++;
                    violation("e", c.name + ": " + c.id + " returned true but the resource never saw its task run");
                }
            }
            int unfaultedErrors = 0;
            for (RunCall c : calls.values()) {
                if (c.outcome == Outcome.INDETERMINATE && c.outcomeT < c.procEnd && !touched(c.worker, c.generation, c.invokeT - spec.margin().toNanos(), c.outcomeT)) {
                    unfaultedErrors++;
                    violation("c", c.name + ": " + c.id + " failed at " + at(c.outcomeT) + " with an error while no fault"
                            + " touched its worker: " + c.error);
                }
            }
            checkNeverStuck();
            Map<String, Integer> hitsByMode = new TreeMap<>();
            for (Scenario.Fault f : r.faults()) {
                RunCall c = byKey.get(f.holder() == null ? "" : keyOf(f.holder()));
                boolean inFlight = c != null && c.invokeT < f.start() && (c.outcome == Outcome.NONE || c.outcomeT > f.start());
                if (inFlight && !(f.kind().equals("session-kill") && f.effect() == 0)) {
                    hitsByMode.merge(f.kind().equals("partition") ? f.kind() + ":" + f.mode() : f.kind(), 1,
                            Integer::sum);
                }
            }
            checkNotes.put("a", nRuns + " runs; overlapping within atMostFor " + overlaps + " (atMostFor "
                    + ms(atMost) + " ms)");
            checkNotes.put("b", "started before the previous call + atLeastFor " + early + " (atLeastFor "
                    + ms(atLeast) + " ms, slack " + ms(tol) + " ms)");
            checkNotes.put("c", "found taken with no holder possible " + stuck + " (a name stays taken at most atMostFor"
                    + " " + ms(atMost) + " ms after a grant, + margin); longest gap between runs of a name "
                    + (maxGap < 0 ? "-" : ms(maxGap)) + " ms; calls by a worker no fault touched that ended in an error "
                    + unfaultedErrors);
            checkNotes.put("e", "returned false but ran " + ranFalse + ", returned true but never ran " + notRun
                    + (unmatched > 0 ? ", runs of unknown calls " + unmatched : ""));
            noteErrors("runOnce call(s)");
            int hits = hitsByMode.values().stream().mapToInt(Integer::intValue).sum();
            long skipped = calls.values().stream().filter(c -> Boolean.FALSE.equals(c.ran)).count();
            long unknown = calls.values().stream().filter(c -> c.outcome != Outcome.OK).count();
            int total = violations.values().stream().mapToInt(Integer::intValue).sum();
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
            return new Result(r.backend(), r.backendName(), scenario, spec, verdict, reason, ops, calls.size(), nRuns,
                    skipped, unknown, r.accesses().size(), 0, r.faults().size(), hits, hitsByMode, violations,
                    checkNotes, details, maxGap < 0 ? -1 : ms(maxGap), ms(liveBound), -1, -1, -1, -1, 0, 0, 0,
                    r.samples().size(), notes);
        }
    }
}
