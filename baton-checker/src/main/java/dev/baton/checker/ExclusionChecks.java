package dev.baton.checker;

import dev.baton.checker.Analysis.Attempt;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.baton.checker.Findings.ms;

/**
 * The safety checks on the order of holds: (a) fenced exclusion, judged from the resource's own record in the order it
 * decided (no accepted access goes back to a lower token, each token's accesses form one run, no update is lost or
 * repeated, the final counter equals the accepted increments); (b) tokens, judged from the grants the workers reported
 * (unique per lock, and rising in real-time order); and the failover note (what each failover or switchover did to
 * tokens, holders and the first grant after it).
 */
final class ExclusionChecks {
    private final Recorded in;

    ExclusionChecks(Recorded in) {
        this.in = in;
    }

    /** (a) from the resource's record, in the order it decided. */
    void checkFencedExclusion() {
        Scenario.Record r = in.record();
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
                    in.violation("a", entry.getKey() + ": " + a.op() + " by " + a.attempt() + " with token " + a.token()
                            + " accepted after token " + maxToken + " (" + in.at(a.nanos()) + ")");
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
                        in.violation("a", entry.getKey() + ": write of " + a.value() + " by " + a.attempt() + " (token "
                                + a.token() + ") over counter " + counter + ": an update was lost or repeated ("
                                + in.at(a.nanos()) + ")");
                    }
                    counter = a.value();
                }
            }
            acceptedWrites += writes;
            long finalCounter = r.counters().getOrDefault(entry.getKey(), 0L);
            if (finalCounter != writes) {
                in.violation("a", entry.getKey() + ": final counter " + finalCounter + " but " + writes
                        + " accepted increments");
            }
        }
        in.checkNote("a", "stale accepted " + staleAccepted + ", split token runs " + splitRuns
                + ", lost/repeated updates " + badWrites + ", " + acceptedWrites + " accepted increments = counters "
                + r.counters().values());
    }

    /** (b) from the grants the workers reported. */
    void checkTokens() {
        Timeline timeline = in.timeline();
        Map<String, List<Attempt>> perLock = timeline.grantsPerLock();
        int n = 0;
        for (var entry : perLock.entrySet()) {
            Map<Long, Attempt> seen = new HashMap<>();
            for (Attempt a : entry.getValue()) {
                n++;
                Attempt other = seen.put(a.token, a);
                if (other != null) {
                    in.violation("b", entry.getKey() + ": token " + a.token + " granted to both " + other.id + " and " + a.id);
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
                    in.violation("b", entry.getKey() + ": " + b.id + " began after " + maxBefore.id + " was granted token "
                            + maxBefore.token + " yet got token " + b.token + " (" + in.at(b.invokeT) + ")");
                }
            }
        }
        in.checkNote("b", n + " grants, tokens unique per lock and in real-time order unless listed");
    }

    /**
     * For each failover: the tokens of grants begun after it against every token granted before it (check (b) counts
     * a token that is not above as a violation), the time from the kill to the first grant of any lock, and what
     * became of the holders at the kill (kept their lock, told it was lost, or neither — check (e) counts a holder
     * that still believed while another was granted its lock).
     */
    void checkFailovers() {
        Scenario.Record r = in.record();
        Timeline timeline = in.timeline();
        Map<String, List<Attempt>> perLock = timeline.grantsPerLock();
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
            note.append(note.length() == 0 ? "" : "; ").append(f.kind()).append(" at ").append(in.at(f.start()))
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
            in.checkNote("failover", note.toString());
            in.findings().notes.add(note.toString());
        }
    }
}
