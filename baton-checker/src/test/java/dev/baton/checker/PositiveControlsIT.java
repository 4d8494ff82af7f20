package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A checker that cannot fail proves nothing: each deliberately broken variant must make it report FAIL, on
 * the check that should catch it — every time, not usually. So no control hopes that a fixed 12 s of random
 * faults happens to produce its violation (one did not, in 2 of 6 runs): each runs until the history so far
 * shows what it must show, analysed every second, and stops there, for at most {@link #BOUND}. And the
 * control's control: workers that ignore lost leases are safe as long as the resource fences every access,
 * so that run must pass, after the fence refused a stale holder and 5 faults hit.
 */
class PositiveControlsIT {
    static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    @TempDir
    Path dir;

    @BeforeAll
    static void servers() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
    }

    /**
     * How long a control may run before it must have shown what it is there to show. Each stops as soon as it
     * has (the history so far is analysed every second), so a run takes seconds, not this.
     */
    static final Duration BOUND = Duration.ofSeconds(60);

    /**
     * Runs the scenario until the history so far satisfies {@code until}, for at most {@link #BOUND}; then
     * returns the analysis of the whole record, on which the test asserts.
     */
    private Analysis.Result run(CheckStrategy strategy, String fault, Fence fence, long seed,
                                Predicate<Analysis.Result> until) throws Exception {
        ScenarioSpec spec = new ScenarioSpec(strategy, PG, "baton_check_ctl", 6, 2, Duration.ofSeconds(1),
                BOUND, fault, seed, dir.resolve(fault), fence, ScenarioSpec.DEFAULT_WORKER_JVM);
        Analysis.Result r = new Analysis(new Scenario(spec, until).run()).analyse();
        System.out.print(Report.block(r));
        return r;
    }

    private static Predicate<Analysis.Result> violated(String check) {
        return r -> r.violations().get(check) > 0;
    }

    @Test
    void releaseWithoutOwnerCheckFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.ReleaseWithoutOwnerCheck(), "pause", Fence.STRICT, 11, violated("e"));
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("e")).as("double grants seen by outcomes/overlap").isPositive();
    }

    @Test
    void acquireWithoutExpiryPredicateFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.AcquireWithoutExpiry(), "kill", Fence.STRICT, 12, violated("e"));
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("e")).isPositive();
    }

    @Test
    void resourceFencingOnlyWritesFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.IgnoreLostLeases(), "pause", BrokenStrategies.WRITES_ONLY, 13,
                violated("a"));
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("a")).as("stale reads accepted").isPositive();
    }

    @Test
    void ignoringLostLeasesWithoutFencingFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.IgnoreLostLeases(), "pause", BrokenStrategies.NONE, 14,
                violated("a"));
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("a")).as("stale accesses accepted, updates lost").isPositive();
    }

    @Test
    void ignoringLostLeasesIsSafeWhenEveryAccessIsFenced() throws Exception {
        // runs until the fence has refused a stale holder and 5 faults hit, the two things a PASS here must show
        Analysis.Result r = run(new BrokenStrategies.IgnoreLostLeases(), "pause", Fence.STRICT, 15,
                so -> so.staleRejected() > 0 && so.hits() >= ScenarioSpec.minHits("pause"));
        assertThat(r.violations().get("a")).isZero();
        assertThat(r.staleRejected()).as("the fence had stale holders to refuse").isPositive();
        assertThat(r.verdict()).isEqualTo("PASS");
    }

    @Test
    void runOnceThatNeverCommitsFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.RunOnceNeverCommitting(), "kill", Fence.STRICT, 16,
                so -> so.violations().get("a") > 0 && so.violations().get("b") > 0);
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("a")).as("runs overlapping within atMostFor").isPositive();
        assertThat(r.violations().get("b")).as("runs starting before atLeastFor").isPositive();
    }
}
