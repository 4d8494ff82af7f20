package dev.baton.checker;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * What the checks of one {@link Analysis} found, the one place they write to: the violations per check (a)–(f) with
 * their details (at most {@value #MAX_DETAILS} per check shown, every one kept for the HTML report), each check's note,
 * the scenario's notes, and the errors acquisitions or {@code runOnce} calls ended in. Also the two ways the report
 * writes times: {@link #ms} for durations and {@link #at} for instants of the run.
 */
final class Findings {
    private static final int MAX_DETAILS = 8;

    private final Scenario.Record r;
    /** Violations per check, every check (a)–(f) present from the start. */
    final Map<String, Integer> violations = new LinkedHashMap<>();
    /** What each check saw, by check name. */
    final Map<String, String> checkNotes = new LinkedHashMap<>();
    final List<String> details = new ArrayList<>();
    /** Every violation found, as {@code (check) detail}: the details keep at most {@value #MAX_DETAILS} per check. */
    final List<String> allViolations = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    /** Acquisitions (or runOnce calls) that ended in an error, by message with its numbers masked. */
    final Map<String, Integer> errors = new TreeMap<>();

    Findings(Scenario.Record r) {
        this.r = r;
        for (String c : List.of("a", "b", "c", "d", "e", "f")) {
            violations.put(c, 0);
        }
    }

    void violation(String check, String detail) {
        violations.merge(check, 1, Integer::sum);
        allViolations.add("(" + check + ") " + detail);
        if (details.stream().filter(d -> d.startsWith("(" + check + ")")).count() < MAX_DETAILS) {
            details.add("(" + check + ") " + detail);
        }
    }

    static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    String at(long nanos) {
        return String.format("t+%.3fs", (nanos - r.runStart()) / 1e9);
    }

    /** Notes the commonest errors: a strategy that fails half its calls may still be safe, but it should show. */
    void noteErrors(String what) {
        errors.entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(3)
                .forEach(e -> notes.add(e.getValue() + " " + what + " failed with: " + e.getKey()));
    }
}
