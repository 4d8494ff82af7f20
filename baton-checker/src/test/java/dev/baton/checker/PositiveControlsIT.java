package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A checker that cannot fail proves nothing: each deliberately broken variant must make it report FAIL, on
 * the check that should catch it. And the control's control: workers that ignore lost leases are safe as
 * long as the resource fences every access, so that run must pass.
 */
class PositiveControlsIT {
    static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    @TempDir
    Path dir;

    @BeforeAll
    static void servers() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
    }

    private Analysis.Result run(CheckStrategy strategy, String fault, Fence fence, long seed) throws Exception {
        return run(strategy, fault, fence, seed, Duration.ofSeconds(12));
    }

    private Analysis.Result run(CheckStrategy strategy, String fault, Fence fence, long seed, Duration length)
            throws Exception {
        ScenarioSpec spec = new ScenarioSpec(strategy, PG, "baton_check_ctl", 6, 2, Duration.ofSeconds(1),
                length, fault, seed, dir.resolve(fault), fence, ScenarioSpec.DEFAULT_WORKER_JVM);
        Analysis.Result r = new Analysis(new Scenario(spec).run()).analyse();
        System.out.print(Report.block(r));
        return r;
    }

    @Test
    void releaseWithoutOwnerCheckFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.ReleaseWithoutOwnerCheck(), "pause", Fence.STRICT, 11);
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("e")).as("double grants seen by outcomes/overlap").isPositive();
    }

    @Test
    void acquireWithoutExpiryPredicateFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.AcquireWithoutExpiry(), "kill", Fence.STRICT, 12);
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("e")).isPositive();
    }

    @Test
    void resourceFencingOnlyWritesFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.IgnoreLostLeases(), "pause", BrokenStrategies.WRITES_ONLY, 13);
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("a")).as("stale reads accepted").isPositive();
    }

    @Test
    void ignoringLostLeasesWithoutFencingFails() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.IgnoreLostLeases(), "pause", BrokenStrategies.NONE, 14);
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations().get("a")).as("stale accesses accepted, updates lost").isPositive();
    }

    @Test
    void ignoringLostLeasesIsSafeWhenEveryAccessIsFenced() throws Exception {
        Analysis.Result r = run(new BrokenStrategies.IgnoreLostLeases(), "pause", Fence.STRICT, 15,
                Duration.ofSeconds(20)); // long enough for the 5 hits a PASS needs
        assertThat(r.violations().get("a")).isZero();
        assertThat(r.staleRejected()).as("the fence had stale holders to refuse").isPositive();
        assertThat(r.verdict()).isEqualTo("PASS");
    }
}
