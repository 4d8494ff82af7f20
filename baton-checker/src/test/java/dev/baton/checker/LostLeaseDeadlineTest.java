package dev.baton.checker;

import dev.baton.LockInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.baton.checker.EventLogs.S;
import static dev.baton.checker.EventLogs.T0;
import static dev.baton.checker.EventLogs.nanos;
import static dev.baton.checker.EventLogs.proc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Check (e) ends a lost holder's belief at its lease's local deadline when that passed before the notice. Seen under
 * load in QuickProfileIT (SQLite and MariaDB × kill, lease 1 s, unchanged code): a starved holder's renewals ran late,
 * its deadline passed and the server expired its grant; a sample then showed the lock free, or another worker was
 * granted it, and the lost notice — after the core's one renewal of an overdue lease, a round trip later — came after
 * that. The holder's {@code isValid()} had been false since its deadline, and the server can never free the lock
 * before it, so neither is a violation. A holder whose deadline had not passed still is.
 */
class LostLeaseDeadlineTest {
    private static final String OVERDUE = "lease on 'lock-0' (token 1, holder w0.0/1/x#5) lost: its local deadline"
            + " passed (this process was paused, or its renewal was late) and the server no longer shows the grant";

    @TempDir
    Path dir;

    /** A was granted token 1 at 0.1 s, its lease's deadline is {@code deadline}, it heard it was lost at 1.25 s. */
    private Scenario.Proc holderA(double deadline) throws Exception {
        return proc(dir, 0, ev(0.1, "invoke", "acquire", "w0.0.0", "tid", 5L),
                ev(0.11, "ok", "acquire", "w0.0.0", "token", 1L, "holder", "w0.0/1/x#5"),
                ev(1.25, "info", "lost", "w0.0.0", "token", 1L, "msg", OVERDUE, "deadline", nanos(deadline)),
                ev(1.26, "invoke", "release", "w0.0.0", "token", 1L),
                ev(1.27, "ok", "release", "w0.0.0", "token", 1L));
    }

    /** B was granted token 2 at 1.05 s, 200 ms before A's notice, and released it at 1.4 s. */
    private Scenario.Proc holderB() throws Exception {
        return proc(dir, 1, ev(0.5, "invoke", "acquire", "w1.0.0", "tid", 7L),
                ev(1.05, "ok", "acquire", "w1.0.0", "token", 2L, "holder", "w1.0/2/x#7"),
                ev(1.4, "invoke", "release", "w1.0.0", "token", 2L),
                ev(1.41, "ok", "release", "w1.0.0", "token", 2L));
    }

    @Test
    void aSuccessorGrantedAfterTheLostHoldersDeadlineButBeforeItsNoticeIsNoOverlap() throws Exception {
        Analysis.Result result = analyse(List.of(holderA(1.0), holderB()), List.of());
        assertThat(violations(result)).isEmpty();
        assertThat(result.checkNotes().get("e")).contains("unexplained belief overlap 0");
    }

    @Test
    void aSuccessorGrantedBeforeTheLostHoldersDeadlineIsStillAnOverlap() throws Exception {
        Analysis.Result result = analyse(List.of(holderA(1.1), holderB()), List.of());
        assertThat(violations(result)).singleElement().asString()
                .contains("w0.0.0 (token 1) and w1.0.0 (token 2) both believed they held it for 50 ms from t+1.050s");
    }

    @Test
    void theBackendShowingTheLockFreeAfterTheLostHoldersDeadlineIsNoViolation() throws Exception {
        Analysis.Result result = analyse(List.of(holderA(1.0)), samplesFreeAt(1.05));
        assertThat(violations(result)).isEmpty();
        assertThat(result.checkNotes().get("e")).contains("granted-but-not-shown 0");
    }

    @Test
    void theBackendShowingTheLockFreeBeforeTheLostHoldersDeadlineIsStillAViolation() throws Exception {
        Analysis.Result result = analyse(List.of(holderA(1.1)), samplesFreeAt(1.05));
        assertThat(violations(result)).singleElement().asString()
                .contains("attempt w0.0.0 was granted lock-0 (token 1) at t+0.110s and still held it, unfaulted,"
                        + " but the backend showed it free at t+1.050s..t+1.055s");
    }

    /** A lost notice without a deadline (an event log from before workers logged it) keeps the old judgement. */
    @Test
    void withoutADeadlineTheNoticeEndsTheBelief() throws Exception {
        Scenario.Proc a = proc(dir, 0, ev(0.1, "invoke", "acquire", "w0.0.0", "tid", 5L),
                ev(0.11, "ok", "acquire", "w0.0.0", "token", 1L),
                ev(1.25, "info", "lost", "w0.0.0", "token", 1L, "msg", OVERDUE),
                ev(1.26, "invoke", "release", "w0.0.0", "token", 1L),
                ev(1.27, "ok", "release", "w0.0.0", "token", 1L));
        Analysis.Result result = analyse(List.of(a, holderB()), List.of());
        assertThat(violations(result)).singleElement().asString().contains("both believed they held it for 200 ms");
    }

    /** Samples every 0.1 s from 0.15 s to 0.95 s showing A holding lock-0, then one at {@code at} showing it free. */
    private static List<Scenario.Sample> samplesFreeAt(double at) {
        List<Scenario.Sample> out = new ArrayList<>();
        for (int tenths = 1; tenths < 10; tenths++) {
            out.add(sample(tenths / 10.0 + 0.05, new LockInfo("lock-0", "w0.0/1/x#5", 1, null, null, true, List.of())));
        }
        out.add(sample(at, new LockInfo("lock-0", null, -1, null, null, false, List.of())));
        out.sort(java.util.Comparator.comparingLong(Scenario.Sample::s0));
        return out;
    }

    private static Scenario.Sample sample(double at, LockInfo info) {
        long s0 = nanos(at);
        return new Scenario.Sample(s0, s0 + 5_000_000, List.of(info));
    }

    private Analysis.Result analyse(List<Scenario.Proc> procs, List<Scenario.Sample> samples) {
        ScenarioSpec spec = new ScenarioSpec(Strategies.byName("lease"), "jdbc:sqlite:/tmp/x.db", "baton_check", 2, 1,
                Duration.ofSeconds(1), Duration.ofSeconds(3), "kill", 42, dir, Fence.STRICT,
                ScenarioSpec.DEFAULT_WORKER_JVM);
        Scenario.Record rec = new Scenario.Record(spec, "SQLite 3", "sqlite", procs, List.of(), samples, List.of(),
                Map.of(), List.of(new Scenario.Probe("lock-0", true, 5, null)), List.of(), 0, T0, T0 + 2 * S,
                T0 + 2 * S, List.of(), Optional.empty());
        return new Analysis(rec).analyse();
    }

    private static List<String> violations(Analysis.Result result) {
        return result.details().stream().filter(d -> d.startsWith("(e)")).toList();
    }

    private static Object[] ev(double at, String type, String op, String attempt, Object... more) {
        List<Object> kv = new ArrayList<>(List.of("t", nanos(at), "type", type, "op", op, "a", attempt,
                "lock", "lock-0"));
        kv.addAll(List.of(more));
        return kv.toArray();
    }
}
