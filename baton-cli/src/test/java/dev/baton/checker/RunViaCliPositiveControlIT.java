package dev.baton.checker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Positive controls of {@code baton check --via-cli}: they must FAIL, every time. No test hook in baton: the
 * command program itself lets its grandchild escape with {@code setsid()} and does not wait for it (baton's
 * docs/CLI.md says it cannot catch a process that leaves its session), so the grandchild outlives every grant and
 * keeps reading the resource while later grants run.
 * <ul>
 *   <li>With the strict fence: the survivor check must report processes alive after their {@code baton run}
 *       exited (every run's grandchild lives 5.5 s, past grace + bound = 2.5 s);</li>
 *   <li>with a fence that admits every access: the escaped grandchild's reads after a later grant's command
 *       began must show as accepted stale accesses (there is always a later grant: three workers contend for
 *       one lock the whole time).</li>
 * </ul>
 */
class RunViaCliPositiveControlIT {
    @TempDir
    Path dir;

    /** A resource that admits everything: what the checker sees when fencing is off. */
    private static final Fence OFF = new Fence() {
        @Override
        public boolean admits(String op, long token, long highestSeen) {
            return true;
        }

        @Override
        public boolean raisesMark(String op) {
            return true;
        }
    };

    private CliScenario.Result run(Fence fence, String name) throws Exception {
        CliScenario.Spec spec = new CliScenario.Spec("lease", "jdbc:sqlite:" + dir.resolve(name + ".db"),
                "baton_runcli_ctl", 3, 1, Duration.ofSeconds(1), Duration.ofSeconds(6), "none", 7, dir.resolve(name),
                fence, true, 1);
        CliScenario.Result r = new CliScenario(spec).run();
        System.out.print(CliScenario.block(r));
        return r;
    }

    @Test
    void aGrandchildThatEscapesTheProcessGroupFailsTheSurvivorCheck() throws Exception {
        CliScenario.Result r = run(Fence.STRICT, "strict");
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations()).anyMatch(v -> v.contains("still alive"));
    }

    @Test
    void withFencingOffTheEscapedGrandchildsLateAccessesAreViolations() throws Exception {
        CliScenario.Result r = run(OFF, "off");
        assertThat(r.verdict()).isEqualTo("FAIL");
        assertThat(r.violations()).anyMatch(v -> v.startsWith("stale access accepted"));
    }
}
