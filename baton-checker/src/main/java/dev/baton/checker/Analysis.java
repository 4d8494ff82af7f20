package dev.baton.checker;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
 *       what makes it safe. A lease heard lost stopped counting at its local deadline if that came first
 *       ({@link Attempt#beliefEnd});</li>
 *   <li>(f) dead places: a lock seen free while a live waiter stood behind the place of a dead worker process is
 *       granted within the strategy's bound plus the scenario's margin.</li>
 * </ul>
 * Where the backend shows a lock's holder as a server session (advisory and named locks), the sample names
 * a worker process, not an attempt: the attempt is the one of that process and lock whose own history
 * allows it to hold the lock at that time (see {@link Timeline#holdUntil}).
 *
 * <p>This class is the overview: {@link #analyse} rebuilds the history, runs the checks in the order of the list
 * below (a {@code runOnce} record goes to {@link RunOnceChecks} instead) and gives the verdict. The parts, each
 * package-private:
 * <ol>
 *   <li>{@link Timeline}: the attempts rebuilt from the workers' events, the fault windows, and what the checks ask of
 *       that history;</li>
 *   <li>{@link ExclusionChecks}: (a), (b) and the failover note;</li>
 *   <li>{@link LivenessChecks}: (c), (d) and (f), dead places;</li>
 *   <li>{@link OutcomeChecks}: (e) and belief overlap;</li>
 *   <li>{@link RunOnceChecks}: the same (a)–(e) for {@code runOnce}, with its own verdict;</li>
 *   <li>{@link Findings}: where every check writes its violations and notes.</li>
 * </ol>
 */
final class Analysis {
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
        /**
         * The lease's conservative local deadline the first lost notice reported (the worker's {@code nanoTime}, the
         * event log's time base), or MAX_VALUE if it reported none (an event log from before workers logged it, or a
         * lease that does not come from Baton's core).
         */
        long lostDeadline = Long.MAX_VALUE;
        long procEnd = Long.MAX_VALUE;
        /** The error an acquisition ended in (outcome info), or null. */
        String error;

        String key() {
            return "w" + worker + "." + generation + "#" + tid;
        }

        boolean ok() {
            return outcome == Outcome.OK;
        }

        /**
         * When this attempt stopped believing it held the lock: its release, its process's end, or its lost lease —
         * the notice, or the lease's local deadline if that passed before it. From the deadline on {@code isValid()}
         * was false, and the server could not free the lock before it; the notice may come a watchdog tick and a
         * round trip later (the core renews an overdue lease once before calling it lost).
         */
        long beliefEnd() {
            return Math.min(Math.min(releaseT, lostEnd()), procEnd);
        }

        /** When the lost lease stopped counting: its notice, or its deadline if that was earlier; else MAX_VALUE. */
        long lostEnd() {
            return Math.min(lostT, lostDeadline);
        }

        /** Whether the lease was lost and its deadline, known, had passed before the notice. */
        boolean lostAfterDeadline() {
            return lostT != Long.MAX_VALUE && lostDeadline < lostT;
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
    /** The record, the timeline and the findings, shared by every check class. */
    private final Recorded in;
    private final Findings findings;
    private final Timeline timeline;
    private final ExclusionChecks exclusion;
    private final LivenessChecks liveness;
    private final OutcomeChecks outcomes;

    Analysis(Scenario.Record r) {
        this.r = r;
        this.spec = r.spec();
        this.in = Recorded.of(r);
        this.findings = in.findings();
        this.timeline = in.timeline();
        this.exclusion = new ExclusionChecks(in);
        this.liveness = new LivenessChecks(in);
        this.outcomes = new OutcomeChecks(in);
    }

    /** The record analysed, for {@link HtmlReport}. */
    Scenario.Record record() {
        return r;
    }

    /** The acquisition attempts {@link #analyse} rebuilt, in the order they were read. */
    List<Attempt> attempts() {
        return List.copyOf(timeline.attempts());
    }

    /** Every violation {@link #analyse} found, as {@code (check) detail}, none left out. */
    List<String> allViolations() {
        return List.copyOf(findings.allViolations);
    }

    /** Whether a fault hit a holder, after {@link #analyse}. */
    boolean hit(Scenario.Fault f) {
        return timeline.hitAttempt(f) != null;
    }

    /**
     * Rebuilds the history and runs the checks: (a), (b) and the failover note; (c), counting the hits; (d); (f);
     * then (e). The verdict: FAIL on any violation; else INCONCLUSIVE if no lock was granted or fewer faults hit a
     * holder (a waiter, for kill-waiter) than the scenario needs; else PASS. A scenario that did not apply is N/A
     * (REFUSED where it refused the pool).
     */
    Result analyse() {
        String scenario = spec.fault();
        if (r.notApplicable().isPresent()) {
            String na = r.notApplicable().get();
            return new Result(r.backend(), r.backendName(), scenario, spec, na.contains(" refused --pool ") ? "REFUSED"
                    : "N/A", na, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, Map.of(), Map.of(), Map.of(), List.of(), 0, 0, -1, -1, -1, -1, 0, 0, 0, 0,
                    List.of());
        }
        findings.notes.addAll(r.notes());
        timeline.markFaultWindows();
        if (spec.strategy() instanceof JdbcRunOnceStrategy) {
            return new RunOnceChecks(in, liveness).analyse(); // it reads the runOnce calls from the events itself
        }
        timeline.rebuildAttempts();
        exclusion.checkFencedExclusion();
        exclusion.checkTokens();
        exclusion.checkFailovers();
        Map<String, Integer> hitsByMode = new TreeMap<>();
        List<Long> lostNotices = new ArrayList<>();
        long[] recovery = liveness.checkLiveness(hitsByMode, lostNotices);
        liveness.checkNeverStuck();
        liveness.checkDeadPlaces();
        long[] overlap = outcomes.checkOutcomes();
        List<Long> handOvers = timeline.handOvers();

        Collection<Attempt> all = timeline.attempts();
        long attempts = all.size();
        long grants = all.stream().filter(Attempt::ok).count();
        long timeouts = all.stream().filter(a -> a.outcome == Outcome.FAIL).count();
        long unknown = all.stream()
                .filter(a -> a.outcome == Outcome.NONE || a.outcome == Outcome.INDETERMINATE).count();
        long stale = r.accesses().stream().filter(a -> !a.accepted()).count();
        int hits = hitsByMode.values().stream().mapToInt(Integer::intValue).sum();
        int total = findings.violations.values().stream().mapToInt(Integer::intValue).sum();
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
        findings.noteErrors("acquisition(s)");
        lostNotices.sort(null);
        handOvers.sort(null);
        return new Result(r.backend(), r.backendName(), scenario, spec, verdict, reason, timeline.ops(), attempts, grants,
                timeouts, unknown, r.accesses().size(), stale, r.faults().size(), hits, hitsByMode,
                findings.violations, findings.checkNotes, findings.details, recovery[0], recovery[1],
                pct(handOvers, 50), pct(handOvers, 99), pct(lostNotices, 50), pct(lostNotices, 99), lostNotices.size(),
                (int) overlap[0], overlap[1], r.samples().size(), findings.notes);
    }

    /** A message with its numbers masked, so errors of one kind count together. */
    static String errorKind(String msg) {
        String m = msg.replaceAll("\\d+", "N");
        return m.length() > 200 ? m.substring(0, 200) + "…" : m;
    }

    private static long pct(List<Long> sorted, int p) {
        if (sorted.isEmpty()) {
            return -1;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    static String keyOf(String holder) {
        int slash = holder.indexOf('/');
        int hash = holder.lastIndexOf('#');
        if (slash < 0 || hash < 0) {
            return holder;
        }
        return holder.substring(0, slash) + holder.substring(hash);
    }

    /** How many times check (f) saw a free lock with a live waiter behind a dead place (0 if it did not run). */
    static int deadPlaceWindows(Result result) {
        String note = result.checkNotes().getOrDefault("f", "");
        return note.isEmpty() || !Character.isDigit(note.charAt(0)) ? 0 : Integer.parseInt(note.substring(0, note.indexOf(' ')));
    }

    /**
     * For an event log whose lost notices do not carry the lease's deadline (written before workers logged it, or by
     * a lease not from Baton's core; with the deadline, {@link Attempt#beliefEnd} ends the belief there exactly and
     * this is not used): whether an overlap of beliefs is only the lag of an asynchronous lost notice: the earlier
     * holder's lease ended at its own local deadline (its renewals failed: the core's watchdog says "no successful renewal before its
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
}
