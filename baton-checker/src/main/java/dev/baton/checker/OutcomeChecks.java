package dev.baton.checker;

import dev.baton.LockInfo;
import dev.baton.checker.Analysis.Attempt;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.baton.checker.Analysis.endedByDeadlineNotice;
import static dev.baton.checker.Analysis.keyOf;
import static dev.baton.checker.Analysis.lateDeadlineNotice;
import static dev.baton.checker.Findings.ms;

/**
 * Check (e), no double outcome, from the backend's samples of each lock against the workers' own histories: a
 * holder the backend shows is an attempt that did not report failure and has the token it reported (a session holder
 * is matched to its process's attempts by {@link Timeline#holdUntil}; one seen long after its process died counts
 * under (d)); an unfaulted granted attempt is the holder every sample shows while it believes; and two attempts'
 * beliefs overlap only where a fault that stalls a holder, or (in an event log without the lease's deadline) a
 * deadline's late lost notice, explains it — such overlaps are counted as information. A lost lease's belief ends at
 * its local deadline when that passed before the notice ({@link Attempt#beliefEnd}).
 */
final class OutcomeChecks {
    private final Recorded in;

    OutcomeChecks(Recorded in) {
        this.in = in;
    }

    /** (e) and belief overlap. Returns {overlaps counted as information, their total ms}. */
    long[] checkOutcomes() {
        ScenarioSpec spec = in.spec();
        Scenario.Record r = in.record();
        Timeline timeline = in.timeline();
        int seenFailed = 0;
        int seenFailedCutOff = 0;
        int deadHolders = 0;
        int wrongToken = 0;
        int unknownHolder = 0;
        int foreignHolder = 0;
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
                    for (Attempt c : timeline.ofProcess(holder.worker(), holder.generation(), info.name())) {
                        if (c.invokeT < s.s1() && timeline.holdUntil(c) > s.s0()) {
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
                        in.violation("d", info.name() + " held by a session of w" + holder.worker() + "." + holder.generation() + " at " + in.at(s.s1())
                                + ", " + ms(s.s0() - exit) + " ms after that process had died (" + info.holder() + ")");
                    } else if (failed != null) {
                        seenFailed++;
                        in.violation("e", "attempt " + failed.id + " reported failure at " + in.at(failed.outcomeT)
                                + " but the backend showed its process's session holding " + info.name() + " at "
                                + in.at(s.s1()) + " (" + info.holder() + ")");
                    } else {
                        unknownHolder++;
                        in.violation("e", info.name() + " held by " + info.holder() + " at " + in.at(s.s0()) + ".."
                                + in.at(s.s1()) + ", when no attempt of that process could hold it by its own history");
                    }
                    continue;
                }
                if (timeline.foreign(info.holder())) {
                    foreignHolder++;
                    in.violation("e", info.name() + " held by " + info.holder() + " at " + in.at(s.s1())
                            + ", not a client of this run's workers: another client uses this run's table or key"
                            + " prefix (another run of the checker? give each run its own --table)");
                    continue;
                }
                Attempt a = timeline.byKey(keyOf(info.holder()));
                if (a == null) {
                    unknownHolder++;
                    in.violation("e", info.name() + " held by " + info.holder() + " at " + in.at(s.s1())
                            + ", which matches no attempt in the workers' histories");
                } else if (a.outcome == Outcome.FAIL && (spec.fault().equals("failover") || spec.fault().equals("switchover"))
                        && timeline.faulted(a, s.s0(), s.s1())) {
                    // a waiter cut off from the deployment while its leader was replaced (its server was the one
                    // killed): the others kept serving and made its place the head, which it could neither learn nor
                    // withdraw before its wait ran out; nobody believed it held the lock, and its place goes with its
                    // session or its withdrawal once it is back
                    seenFailedCutOff++;
                } else if (a.outcome == Outcome.FAIL) {
                    seenFailed++;
                    in.violation("e", "attempt " + a.id + " reported failure at " + in.at(a.outcomeT)
                            + " but the backend showed it holding " + info.name() + " at " + in.at(s.s1()));
                } else if (a.ok() && info.fencingToken() >= 0 && a.token != info.fencingToken()) {
                    wrongToken++;
                    in.violation("e", "attempt " + a.id + " reported token " + a.token + " but the backend showed token "
                            + info.fencingToken() + " at " + in.at(s.s1()));
                }
            }
        }
        for (Attempt a : timeline.attempts()) {
            if (!a.ok() || timeline.faulted(a, a.outcomeT, a.beliefEnd())) {
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
                    in.violation("e", "attempt " + a.id + " was granted " + a.lock + " (token " + a.token + ") at "
                            + in.at(a.outcomeT) + " and still held it, unfaulted, but the backend showed "
                            + (shown == null ? "no row" : shown.held() ? shown.holder() + " token " + shown.fencingToken()
                            : "it free") + " at " + in.at(s.s0()) + ".." + in.at(s.s1()));
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
        for (var entry : timeline.grantsPerLock().entrySet()) {
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
                    boolean explained = faultsThatStall && (timeline.faulted(a, from, to) || timeline.faulted(b, from, to));
                    // a worker that logged its lease's deadline had its belief ended there already (beliefEnd):
                    // what overlaps past it is real; the message heuristic is for event logs without the deadline
                    if (!explained && a.lostDeadline == Long.MAX_VALUE && endedByDeadlineNotice(a, to)
                            && lateDeadlineNotice(a.lostMsg, to - from, spec.leaseTime(), spec.margin())) {
                        lateNotices++;
                        explained = true;
                    }
                    if (explained) {
                        infoOverlaps++;
                        infoMs += ms(to - from);
                    } else {
                        badOverlaps++;
                        in.violation("e", entry.getKey() + ": " + a.id + " (token " + a.token + ") and " + b.id + " (token "
                                + b.token + ") both believed they held it for " + ms(to - from) + " ms from " + in.at(from)
                                + (faultsThatStall ? ", neither of them faulted" : ""));
                    }
                }
            }
        }
        long pastDeadline = timeline.attempts().stream().filter(a -> a.ok() && a.lostAfterDeadline()).count();
        if (spec.strategy().sessionKillEndsHolds()) {
            in.checkNote("d", in.findings().checkNotes.get("d") + "; samples showing a lock held by a dead worker's session "
                    + deadHolders);
        }
        in.checkNote("e", samples.size() + " samples; failed-seen-as-owner " + seenFailed + ", wrong token "
                + wrongToken + ", unknown holder " + unknownHolder + (foreignHolder == 0 ? ""
                : ", held by a client not of this run " + foreignHolder) + ", granted-but-not-shown " + notSeen
                + ", unexplained belief overlap " + badOverlaps
                + (seenFailedCutOff > 0 ? ", failed-seen-as-owner while cut off by the failover (information) "
                + seenFailedCutOff : "")
                + (lateNotices > 0 ? ", overlaps ended by a deadline's late lost notice " + lateNotices : "")
                + (pastDeadline > 0 ? ", lost notices after the lease's deadline (belief ended at the deadline) "
                + pastDeadline : ""));
        return new long[] {infoOverlaps, infoMs};
    }

    private long procExit(int worker, int generation) {
        for (Scenario.Proc p : in.record().procs()) {
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
}
