package dev.baton.checker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code runOnce} history is read once: the operations the report counts are the calls the workers invoked, and a
 * torn event line is noted once. Seen in RunOnceAndPoolsIT's reports: "operations 470, runOnce calls 176, resource
 * accesses 59", twice the 235 invocations, because the lock checks' timeline read the events before the runOnce
 * checks read them again.
 */
class RunOnceHistoryTest {
    private static final long S = 1_000_000_000L;
    private static final long T0 = 50 * S;

    @TempDir
    Path dir;

    @Test
    void eachInvocationCountsOnceAndATornLineIsNotedOnce() throws Exception {
        Scenario.Proc runner = proc(0, """
                {"t":%d,"type":"invoke","op":"runOnce","a":"w0.0.0","lock":"lock-0","tid":5}
                {"t":%d,"type":"ok","op":"runOnce","a":"w0.0.0","lock":"lock-0","ran":true}
                """.formatted(T0 + S / 10, T0 + S / 5));
        Scenario.Proc skipper = proc(1, """
                {"t":%d,"type":"invoke","op":"runOnce","a":"w1.0.0","lock":"lock-0","tid":7}
                {"t":%d,"type":"ok","op":"runOnce","a":"w1.0.0","lock":"lock-0","ran":false}
                {"t":%d,"type":"inv
                """.formatted(T0 + S / 8, T0 + S / 4, T0 + S / 2));
        ScenarioSpec spec = new ScenarioSpec(Strategies.byName("run-once"), "jdbc:sqlite:/tmp/x.db", "baton_check", 2,
                1, Duration.ofSeconds(1), Duration.ofSeconds(3), "none", 42, dir, Fence.STRICT,
                ScenarioSpec.DEFAULT_WORKER_JVM);
        Scenario.Record rec = new Scenario.Record(spec, "SQLite 3", "sqlite", List.of(runner, skipper), List.of(),
                List.of(), List.of(), Map.of(), List.of(new Scenario.Probe("lock-0", true, 5, null)), List.of(), 0, T0,
                T0 + 2 * S, T0 + 2 * S, List.of(), Optional.empty());

        Analysis.Result result = new Analysis(rec).analyse();

        assertThat(result.attempts()).as("runOnce calls").isEqualTo(2);
        assertThat(result.ops()).as("operations invoked").isEqualTo(2);
        assertThat(result.notes()).filteredOn(n -> n.contains("unreadable event line skipped")).hasSize(1);
    }

    private Scenario.Proc proc(int index, String events) throws Exception {
        Path log = dir.resolve("w" + index + ".0.jsonl");
        Files.writeString(log, events);
        return new Scenario.Proc(index, 0, null, log);
    }
}
