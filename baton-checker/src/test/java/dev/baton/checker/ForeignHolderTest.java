package dev.baton.checker;

import dev.baton.LockInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.baton.checker.EventLogs.S;
import static dev.baton.checker.EventLogs.T0;
import static dev.baton.checker.EventLogs.nanos;
import static dev.baton.checker.EventLogs.proc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder that is not one of the run's workers says so, rather than passing for one of them. Seen when two
 * {@code baton check} runs shared Redis's default key prefix: the other run's worker {@code w2.0} (another process,
 * another client id) held {@code lock-0}, and check (e) reported this run's {@code w2.0} attempt as showing the
 * "wrong token", which read as a bug in the backend.
 */
class ForeignHolderTest {
    @TempDir
    Path dir;

    private Analysis.Result analyse(String shownHolder, long shownToken) throws Exception {
        Scenario.Proc w = proc(dir, 0, new Object[]{"t", nanos(0.05), "type", "info", "op", "ready", "client", "w0.0/1/x"},
                new Object[]{"t", nanos(0.1), "type", "invoke", "op", "acquire", "a", "w0.0.0", "lock", "lock-0", "tid", 5L},
                new Object[]{"t", nanos(0.11), "type", "ok", "op", "acquire", "a", "w0.0.0", "lock", "lock-0", "token", 1L,
                        "holder", "w0.0/1/x#5"},
                new Object[]{"t", nanos(0.3), "type", "invoke", "op", "release", "a", "w0.0.0", "lock", "lock-0", "token", 1L},
                new Object[]{"t", nanos(0.31), "type", "ok", "op", "release", "a", "w0.0.0", "lock", "lock-0", "token", 1L});
        ScenarioSpec spec = new ScenarioSpec(Strategies.byName("lease"), "jdbc:sqlite:/tmp/x.db", "baton_check", 2, 1,
                Duration.ofSeconds(1), Duration.ofSeconds(3), "kill", 42, dir, Fence.STRICT,
                ScenarioSpec.DEFAULT_WORKER_JVM);
        List<Scenario.Sample> samples = List.of(new Scenario.Sample(nanos(0.2), nanos(0.21),
                List.of(new LockInfo("lock-0", shownHolder, shownToken, null, null, true, List.of()))));
        Scenario.Record rec = new Scenario.Record(spec, "SQLite 3", "sqlite", List.of(w), List.of(), samples, List.of(),
                Map.of(), List.of(new Scenario.Probe("lock-0", true, 5, null)), List.of(), 0, T0, T0 + 2 * S,
                T0 + 2 * S, List.of(), Optional.empty());
        return new Analysis(rec).analyse();
    }

    @Test
    void aHolderOfAnotherRunIsNamedAsNotOneOfThisRunsWorkers() throws Exception {
        Analysis.Result result = analyse("w0.0/999/other#5", 7);
        assertThat(result.verdict()).isEqualTo("FAIL");
        assertThat(result.details()).anySatisfy(d -> assertThat(d)
                .contains("lock-0 held by w0.0/999/other#5", "not a client of this run's workers",
                        "another client uses this run's table or key prefix", "--table"));
        assertThat(result.details()).noneSatisfy(d -> assertThat(d).contains("reported token"));
    }

    /** Control: this run's own client showing another token is still the wrong token. */
    @Test
    void theRunsOwnClientShowingAnotherTokenIsStillTheWrongToken() throws Exception {
        Analysis.Result result = analyse("w0.0/1/x#5", 7);
        assertThat(result.details()).anySatisfy(d -> assertThat(d)
                .contains("attempt w0.0.0 reported token 1 but the backend showed token 7"));
        assertThat(result.details()).noneSatisfy(d -> assertThat(d).contains("not a client of this run's workers"));
    }

    /** Control: the run's own holder with its own token is no violation. */
    @Test
    void theRunsOwnHolderIsNoViolation() throws Exception {
        assertThat(analyse("w0.0/1/x#5", 1).details()).isEmpty();
    }
}
