package dev.baton.checker;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code --json} report as docs/CHECKER.md documents it: field names, order, nesting, nulls left out. */
class ReportJsonTest {
    @Test
    void writesOneCompactObjectPerScenario() {
        ScenarioSpec spec = new ScenarioSpec(Strategies.byName("lease"), "jdbc:sqlite:/tmp/x.db", "baton_check", 6, 2,
                Duration.ofSeconds(2), Duration.ofSeconds(60), "kill", 42, Path.of("/tmp"), Fence.STRICT,
                ScenarioSpec.DEFAULT_WORKER_JVM);
        Map<String, Integer> violations = new LinkedHashMap<>();
        for (String c : List.of("a", "b", "c", "d", "e")) {
            violations.put(c, c.equals("c") ? 1 : 0);
        }
        Analysis.Result r = new Analysis.Result("SQLite 3 \"file\"", "sqlite", "kill", spec, "FAIL", null, 10, 9, 8, 1,
                0, 7, 2, 6, 5, Map.of(), violations, Map.of(), List.of("(c) late\nhand-over"), 1200, 4000, 30, 90,
                -1, -1, 0, 1, 15, 100, List.of());

        assertThat(Report.json(List.of(r), "baton check --url x")).isEqualTo("{\"command\":\"baton check --url x\","
                + "\"scenarios\":[{\"backend\":\"sqlite\",\"description\":\"SQLite 3 \\\"file\\\"\",\"scenario\":\"kill\","
                + "\"strategy\":\"lease\",\"pool\":\"default\",\"leaseMs\":2000,\"durationS\":60,\"workers\":6,"
                + "\"locks\":2,\"seed\":42,\"verdict\":\"FAIL\",\"operations\":10,\"acquisitions\":9,\"grants\":8,"
                + "\"timeouts\":1,\"unknown\":0,\"accesses\":7,\"staleRejected\":2,\"faults\":6,\"hits\":5,"
                + "\"violations\":{\"a\":0,\"b\":0,\"c\":1,\"d\":0,\"e\":0},\"maxRecoveryMs\":1200,"
                + "\"recoveryBoundMs\":4000,\"handOverP50Ms\":30,\"handOverP99Ms\":90,\"lostNoticeP50Ms\":-1,"
                + "\"lostNoticeP99Ms\":-1,\"beliefOverlaps\":1,\"beliefOverlapMs\":15,"
                + "\"details\":[\"(c) late\\nhand-over\"]}]}\n");
    }
}
