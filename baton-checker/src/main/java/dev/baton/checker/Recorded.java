package dev.baton.checker;

/**
 * What every check of one {@link Analysis} works on, built once and handed to each check class
 * ({@link ExclusionChecks}, {@link LivenessChecks}, {@link OutcomeChecks}, {@link RunOnceChecks}): the scenario's
 * record (immutable), the {@link Timeline} rebuilt from the workers' events (filled by {@link Analysis#analyse} before
 * any check runs, read-only to the checks), and the {@link Findings}, the one thing the checks write to. The check
 * classes keep no copies of these parts.
 *
 * @param record   the scenario's record
 * @param timeline the history rebuilt from it
 * @param findings where the checks write
 */
record Recorded(Scenario.Record record, Timeline timeline, Findings findings) {
    /** The parts for this record: findings with no violation yet, a timeline not yet rebuilt. */
    static Recorded of(Scenario.Record record) {
        Findings findings = new Findings(record);
        return new Recorded(record, new Timeline(record, findings), findings);
    }

    /** The scenario's spec. */
    ScenarioSpec spec() {
        return record.spec();
    }

    /** Counts a violation of check {@code check}, with its detail ({@link Findings#violation}). */
    void violation(String check, String detail) {
        findings.violation(check, detail);
    }

    /** An instant of the run as the report writes it ({@link Findings#at}). */
    String at(long nanos) {
        return findings.at(nanos);
    }

    /** Sets what check {@code check} saw. */
    void checkNote(String check, String note) {
        findings.checkNotes.put(check, note);
    }
}
