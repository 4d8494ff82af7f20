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
 * A fault on the whole server ({@code failover}, {@code restart}) hits every holder at once, so it hits when anyone
 * held a lock as it began, not only the holder the nemesis aimed at. Seen in CI (FailoverIT, PostgreSQL, quick
 * profile): the aimed-at holder had released in the second between the sample and the kill while another still held,
 * the failover note said "holders at the kill 1", and yet the run counted 0 hits and came out INCONCLUSIVE.
 */
class ServerWideHitTest {

    @TempDir
    Path dir;

    /** A holds lock-0 from 0.11 s to 1.0 s; B holds lock-1 from 0.91 s to 1.5 s; the fault aims at A at 1.1 s. */
    private Analysis.Result analyse(String fault, boolean bStillHolds) throws Exception {
        return analyse(fault, bStillHolds, false);
    }

    /** As above; with {@code bDied}, B's process ended at 1.0 s without releasing (its last event the grant). */
    private Analysis.Result analyse(String fault, boolean bStillHolds, boolean bDied) throws Exception {
        Scenario.Proc a = proc(dir, 0, ev(0.1, "invoke", "acquire", "w0.0.0", "lock-0", "tid", 5L),
                ev(0.11, "ok", "acquire", "w0.0.0", "lock-0", "token", 1L, "holder", "w0.0/1/x#5"),
                ev(0.99, "invoke", "release", "w0.0.0", "lock-0", "token", 1L),
                ev(1.0, "ok", "release", "w0.0.0", "lock-0", "token", 1L));
        double bRelease = bStillHolds ? 1.5 : 1.05;
        Scenario.Proc b = bDied
                ? proc(dir, 1, ev(0.9, "invoke", "acquire", "w1.0.0", "lock-1", "tid", 7L),
                        ev(0.91, "ok", "acquire", "w1.0.0", "lock-1", "token", 1L, "holder", "w1.0/2/x#7"))
                : proc(dir, 1, ev(0.9, "invoke", "acquire", "w1.0.0", "lock-1", "tid", 7L),
                        ev(0.91, "ok", "acquire", "w1.0.0", "lock-1", "token", 1L, "holder", "w1.0/2/x#7"),
                        ev(bRelease - 0.01, "invoke", "release", "w1.0.0", "lock-1", "token", 1L),
                        ev(bRelease, "ok", "release", "w1.0.0", "lock-1", "token", 1L));
        if (bDied) {
            b.ended = nanos(1.0);
            b.exited = nanos(1.0);
        }
        ScenarioSpec spec = new ScenarioSpec(Strategies.byName("lease"), "jdbc:sqlite:/tmp/x.db", "baton_check", 2, 2,
                Duration.ofSeconds(1), Duration.ofSeconds(3), fault, 42, dir, Fence.STRICT,
                ScenarioSpec.DEFAULT_WORKER_JVM);
        Scenario.Fault f = new Scenario.Fault(0, fault, "", 0, 0, 1, "lock-0", "w0.0/1/x#5", 1, nanos(1.1),
                nanos(1.3), 1);
        List<Scenario.Sample> samples = List.of(new Scenario.Sample(nanos(0.95), nanos(0.96), List.of(
                new LockInfo("lock-0", "w0.0/1/x#5", 1, null, null, true, List.of()),
                new LockInfo("lock-1", "w1.0/2/x#7", 1, null, null, true, List.of()))));
        Scenario.Record rec = new Scenario.Record(spec, "SQLite 3", "sqlite", List.of(a, b), List.of(f), samples,
                List.of(), Map.of(), List.of(new Scenario.Probe("lock-0", true, 5, null),
                new Scenario.Probe("lock-1", true, 5, null)), List.of(), 0, T0, T0 + 2 * S, T0 + 2 * S, List.of(),
                Optional.empty());
        return new Analysis(rec).analyse();
    }

    @Test
    void aFailoverWhileAnotherWorkerHeldALockHitsAlthoughItsTargetHadReleased() throws Exception {
        Analysis.Result result = analyse("failover", true);
        assertThat(result.hits()).as("hits; %s", result.details()).isEqualTo(1);
        assertThat(result.verdict()).as("%s", result.verdictReason()).isEqualTo("PASS");
    }

    @Test
    void aRestartWhileAnotherWorkerHeldALockHitsAlthoughItsTargetHadReleased() throws Exception {
        assertThat(analyse("restart", true).hits()).isEqualTo(1);
    }

    /** Control: nobody held anything when the failover began: no hit. */
    @Test
    void aFailoverWhileNobodyHeldMisses() throws Exception {
        Analysis.Result result = analyse("failover", false);
        assertThat(result.hits()).isZero();
        assertThat(result.verdict()).isEqualTo("INCONCLUSIVE");
    }

    /** Control: a grant whose process had died before the failover (never released, never told) is no holder. */
    @Test
    void aFailoverAfterTheOnlyOtherHoldersProcessDiedMisses() throws Exception {
        assertThat(analyse("failover", true, true).hits()).isZero();
    }

    /** Control: a fault on one worker (kill) still needs its own target to hold. */
    @Test
    void aKillWhoseTargetHadReleasedMissesWhateverOthersHeld() throws Exception {
        assertThat(analyse("kill", true).hits()).isZero();
    }

    private static Object[] ev(double at, String type, String op, String attempt, String lock, Object... more) {
        List<Object> kv = new ArrayList<>(List.of("t", nanos(at), "type", type, "op", op, "a", attempt, "lock", lock));
        kv.addAll(List.of(more));
        return kv.toArray();
    }
}
