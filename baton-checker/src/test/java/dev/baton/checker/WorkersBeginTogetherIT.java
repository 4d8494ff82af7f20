package dev.baton.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.baton.LockClient;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression (seen as {@code QuickProfileIT} failing on ZooKeeper × pause, liveness, at t+0.3 s, before any fault:
 * "no answer from ZooKeeper within 2000 ms … not connected"): each worker began to contend as soon as its own
 * client was built, while the other workers' JVMs were still starting; on a loaded two-core machine those starts
 * starved the server and the client, and a one-second ZooKeeper session expired with no fault injected. Workers
 * now begin together once every one of them is ready. Made certain here: worker 0 takes two seconds longer to
 * build its client than the others, so a worker that began on its own would invoke long before w0's "ready".
 */
class WorkersBeginTogetherIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @BeforeAll
    static void server() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
    }

    /** The lease strategy, its client built two seconds late in worker 0 (loaded in the workers by class name). */
    public static final class WorkerZeroStartsLate extends JdbcLeaseStrategy {
        @Override
        public String name() {
            return "lease-worker-zero-starts-late";
        }

        @Override
        public LockClient newClient(String url, String table, Duration lease, String identity) {
            if (identity.startsWith("w0.")) {
                try {
                    Thread.sleep(2_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.newClient(url, table, lease, identity);
        }
    }

    @Test
    void noWorkerContendsBeforeEveryWorkerIsReady() throws Exception {
        ScenarioSpec spec = new ScenarioSpec(new WorkerZeroStartsLate(), PositiveControlsIT.PG, "baton_check_begin",
                3, 1, Duration.ofSeconds(1), Duration.ofSeconds(2), "none", 41, dir.resolve("none"), Fence.STRICT,
                ScenarioSpec.DEFAULT_WORKER_JVM);
        new Scenario(spec).run();
        long lastReady = Long.MIN_VALUE;
        long firstInvoke = Long.MAX_VALUE;
        int invokes = 0;
        for (int w = 0; w < 3; w++) {
            for (JsonNode e : events(dir.resolve("none").resolve("w" + w + ".0.jsonl"))) {
                String op = e.path("op").asText();
                if ("info".equals(e.path("type").asText()) && "ready".equals(op)) {
                    lastReady = Math.max(lastReady, e.path("t").asLong());
                } else if ("invoke".equals(e.path("type").asText())) {
                    firstInvoke = Math.min(firstInvoke, e.path("t").asLong());
                    invokes++;
                }
            }
        }
        assertThat(invokes).as("operations the workers began").isPositive();
        assertThat(firstInvoke)
                .as("the first operation (ns, System.nanoTime of its worker) against the last worker's ready")
                .isGreaterThanOrEqualTo(lastReady);
    }

    private static List<JsonNode> events(Path file) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                try {
                    out.add(JSON.readTree(line));
                } catch (IOException torn) {
                    // a line torn by a kill: not this test's concern
                }
            }
        }
        return out;
    }
}
