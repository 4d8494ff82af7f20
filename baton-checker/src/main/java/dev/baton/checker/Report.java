package dev.baton.checker;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Text and JSON reports: one block per backend × scenario, then a summary table. */
final class Report {
    private Report() {
    }

    private static String ms(long v) {
        return v < 0 ? "-" : Long.toString(v);
    }

    static String block(Analysis.Result r) {
        ScenarioSpec s = r.spec();
        StringBuilder sb = new StringBuilder();
        sb.append("== ").append(r.backendName()).append(" × ").append(r.scenario()).append("  [").append(r.backend())
                .append("; strategy ").append(s.strategy().name())
                .append(s.pool() == Pool.DEFAULT ? "" : ", pool " + s.pool()).append(", ").append(s.workers()).append(" workers, ")
                .append(s.locks()).append(" locks, lease ").append(s.leaseTime().toMillis()).append(" ms, ")
                .append(s.duration().toSeconds()).append(" s, seed ").append(s.seed()).append("]\n");
        if (r.verdict().equals("N/A") || r.verdict().equals("REFUSED")) {
            sb.append(r.verdict().equals("N/A") ? "   not applicable: " : "   refused, as documented: ")
                    .append(r.verdictReason()).append('\n');
            return sb.toString();
        }
        if (s.strategy() instanceof JdbcRunOnceStrategy) {
            sb.append(String.format("   operations %d, runOnce calls %d (ran %d, name taken %d, outcome unknown %d),"
                    + " resource accesses %d, samples %d%n", r.ops(), r.attempts(), r.grants(), r.timeouts(),
                    r.unknown(), r.accesses(), r.samples()));
        } else {
            sb.append(String.format("   operations %d, acquisitions %d (granted %d, timed out %d, outcome unknown %d),"
                            + " resource accesses %d (stale rejected %d), samples %d%n", r.ops(), r.attempts(),
                    r.grants(), r.timeouts(), r.unknown(), r.accesses(), r.staleRejected(), r.samples()));
        }
        sb.append(String.format("   faults injected %d, hit a %s %d %s%n", r.faultsInjected(),
                r.scenario().equals("kill-waiter") ? "waiter" : "holder", r.hits(),
                r.hitsByMode().isEmpty() ? "" : r.hitsByMode().toString()));
        String[] names = s.strategy() instanceof JdbcRunOnceStrategy
                ? new String[] {"a no overlap", "b atLeastFor", "c liveness", "d never stuck", "e outcomes"}
                : new String[] {"a fenced exclusion", "b tokens", "c liveness", "d never stuck", "e outcomes",
                        "f dead waiters"};
        for (String n : names) {
            String c = n.substring(0, 1);
            sb.append(String.format("   (%s) %-16s %3d violation(s)  %s%n", c, n.substring(2), r.violations().getOrDefault(c, 0),
                    r.checkNotes().getOrDefault(c, "")));
        }
        sb.append(String.format("   max recovery after a hit %s ms (bound %d ms); hand-over p50/p99 %s/%s ms;"
                        + " lost-lease notice after fault start p50/p99 %s/%s ms (%d notices)%n", ms(r.maxRecoveryMs()),
                r.recoveryBoundMs(), ms(r.handOverP50()), ms(r.handOverP99()), ms(r.lostNoticeP50()),
                ms(r.lostNoticeP99()), r.lostNotices()));
        sb.append(String.format("   belief overlap (information): %d overlap(s), %d ms in all%n", r.overlaps(), r.overlapMs()));
        for (String d : r.details()) {
            sb.append("   ! ").append(d).append('\n');
        }
        for (String n : r.notes()) {
            sb.append("   note: ").append(n).append('\n');
        }
        sb.append("   verdict ").append(r.verdict()).append(" (").append(r.verdictReason()).append(")\n");
        return sb.toString();
    }

    static String summary(List<Analysis.Result> results) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"backend", "scenario", "ops", "grants", "hits", "stale rej", "a", "b", "c", "d", "e", "f",
                "max recov/bound ms", "hand-over p50/p99 ms", "lost notice p50/p99 ms", "verdict"});
        for (Analysis.Result r : results) {
            if (r.verdict().equals("N/A") || r.verdict().equals("REFUSED")) {
                rows.add(new String[] {r.backendName(), r.scenario(), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-",
                        "-", "-", "-", r.verdict()});
                continue;
            }
            Map<String, Integer> v = r.violations();
            rows.add(new String[] {r.backendName(), r.scenario(), Long.toString(r.ops()), Long.toString(r.grants()),
                    Integer.toString(r.hits()), Long.toString(r.staleRejected()), v.get("a").toString(),
                    v.get("b").toString(), v.get("c").toString(), v.get("d").toString(), v.get("e").toString(),
                    v.getOrDefault("f", 0).toString(),
                    ms(r.maxRecoveryMs()) + "/" + r.recoveryBoundMs(), ms(r.handOverP50()) + "/" + ms(r.handOverP99()),
                    ms(r.lostNoticeP50()) + "/" + ms(r.lostNoticeP99()), r.verdict()});
        }
        int[] width = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < rows.size(); k++) {
            String[] row = rows.get(k);
            sb.append('|');
            for (int i = 0; i < row.length; i++) {
                sb.append(' ').append(pad(row[i], width[i], i >= 2 && i < row.length - 1)).append(" |");
            }
            sb.append('\n');
            if (k == 0) {
                sb.append('|');
                for (int w : width) {
                    sb.append("-".repeat(w + 2)).append('|');
                }
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    private static String pad(String s, int w, boolean right) {
        String fill = " ".repeat(w - s.length());
        return right ? fill + s : s + fill;
    }

    static String json(List<Analysis.Result> results, String command) {
        List<Map<String, Object>> scenarios = new ArrayList<>();
        for (Analysis.Result r : results) {
            scenarios.add(Json.fields("backend", r.backendName(), "description", r.backend(), "scenario", r.scenario(),
                    "strategy", r.spec().strategy().name(), "pool", r.spec().pool().id(), "leaseMs", r.spec().leaseTime().toMillis(),
                    "durationS", r.spec().duration().toSeconds(), "workers", r.spec().workers(), "locks", r.spec().locks(),
                    "seed", r.spec().seed(), "verdict", r.verdict(), "reason", r.verdictReason(), "operations", r.ops(),
                    "acquisitions", r.attempts(), "grants", r.grants(), "timeouts", r.timeouts(), "unknown", r.unknown(),
                    "accesses", r.accesses(), "staleRejected", r.staleRejected(), "faults", r.faultsInjected(),
                    "hits", r.hits(), "violations", r.violations(), "maxRecoveryMs", r.maxRecoveryMs(),
                    "recoveryBoundMs", r.recoveryBoundMs(), "handOverP50Ms", r.handOverP50(),
                    "handOverP99Ms", r.handOverP99(), "lostNoticeP50Ms", r.lostNoticeP50(),
                    "lostNoticeP99Ms", r.lostNoticeP99(), "beliefOverlaps", r.overlaps(), "beliefOverlapMs", r.overlapMs(),
                    "details", r.details()));
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("command", command);
        root.put("scenarios", scenarios);
        return Json.write(root) + "\n";
    }
}
