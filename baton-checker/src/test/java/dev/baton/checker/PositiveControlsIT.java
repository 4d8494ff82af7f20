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
        return run(strategy, fault, fence, seed, 6, 2, Duration.ofSeconds(1), "baton_check_ctl", until);
    }

    private Analysis.Result run(CheckStrategy strategy, String fault, Fence fence, long seed, int workers, int locks,
                                Duration lease, String table, Predicate<Analysis.Result> until) throws Exception {
        ScenarioSpec spec = new ScenarioSpec(strategy, PG, table, workers, locks, lease,
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

    /**
     * Places in line that live a lease, as before the heartbeat: a waiter killed at the head of the line keeps the
     * lock, once free, from the live waiters behind it for up to a lease. The lease (4 s) is what such a line needs
     * to show it beyond check (f)'s bound (1.7 s) + margin (1.5 s); the correct line passes the same check whatever
     * the lease. Four workers on one lock: a line always forms, and fewer JVMs start. Its own table: its dead places
     * must not linger into another control's line.
     */
    @Test
    void placesThatLiveALeaseKeepAFreeLockForADeadWaiterAndFail() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.PlacesLiveOneLease(), "kill-waiter", Fence.STRICT, 17, 4, 1,
                Duration.ofSeconds(4), "baton_check_ctl_line", violated("f"));
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("f")).as("a free lock kept for a dead waiter").isPositive();
    }

    /**
     * The control's control: the real line, the same fault, a 1 s lease. It runs until 5 kills hit a waiter and the
     * samples showed a free lock with a live waiter behind a dead place 3 times (what check (f) judges), and must
     * pass: each such lock went to a live waiter within the bound.
     */
    @Test
    void theRealLineGivesAFreeLockToALiveWaiterDespiteADeadPlaceAndPasses() throws Exception {
        Analysis.Result r = run(new JdbcLeaseStrategy(), "kill-waiter", Fence.STRICT, 18, 4, 1, Duration.ofSeconds(1),
                "baton_check_ctl_line2", so -> so.hits() >= ScenarioSpec.minHits("kill-waiter")
                        && Analysis.deadPlaceWindows(so) >= 3);
        assertThat(Analysis.deadPlaceWindows(r)).as("free locks seen with a live waiter behind a dead place")
                .isGreaterThanOrEqualTo(3);
        assertThat(r.violations().get("f")).isZero();
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
