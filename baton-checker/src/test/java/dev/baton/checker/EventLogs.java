package dev.baton.checker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Worker event logs written by hand, for tests that feed the analysis a history of their own. */
final class EventLogs {
    static final long S = 1_000_000_000L;
    /** The run's start in the event logs' time base. */
    static final long T0 = 50 * S;

    private EventLogs() {
    }

    /** The run's time {@code seconds} after its start, in the event log's time base. */
    static long nanos(double seconds) {
        return T0 + Math.round(seconds * 1000) * 1_000_000;
    }

    /** Worker {@code index}, generation 0, whose event log in {@code dir} holds {@code events}, one JSON object each. */
    static Scenario.Proc proc(Path dir, int index, Object[]... events) throws IOException {
        Path log = dir.resolve("w" + index + ".0.jsonl");
        StringBuilder lines = new StringBuilder();
        for (Object[] e : events) {
            lines.append(Json.object(e)).append('\n');
        }
        Files.writeString(log, lines);
        return new Scenario.Proc(index, 0, null, log);
    }
}
