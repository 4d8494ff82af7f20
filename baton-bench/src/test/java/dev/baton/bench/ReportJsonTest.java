package dev.baton.bench;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ReportJsonTest {
    /**
     * A report the hand-written writer produced (a full run, checked in) reads back and is written again
     * byte for byte: same layout, same field order, doubles with three decimals, empty objects as {}.
     */
    @Test
    void writesTheSameDocumentAsTheCheckedInRuns() throws Exception {
        Path file = Path.of("../bench/results/latest-full.json");
        String text = Files.readString(file, StandardCharsets.UTF_8);
        Map<String, Object> tree = JsonMapper.builder().build().readValue(text, new TypeReference<LinkedHashMap<String, Object>>() {
        });

        assertThat(Report.write(tree) + "\n").isEqualTo(text);
    }

    @Test
    void writesEmptyContainersNullsArraysAndDoubles() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("empty", Map.of());
        m.put("none", new ArrayList<>());
        m.put("nan", Double.NaN);
        m.put("d", 2.0 / 3);
        m.put("longs", new long[] {1, 2});
        m.put("text", "a \"q\"\n");
        m.put("list", List.of(1, "x"));

        assertThat(Report.write(m)).isEqualTo("{\n  \"empty\": {},\n  \"none\": [],\n  \"nan\": null,\n  \"d\": 0.667,\n"
                + "  \"longs\": [\n    1,\n    2\n  ],\n  \"text\": \"a \\\"q\\\"\\n\",\n  \"list\": [\n    1,\n    \"x\"\n  ]\n}");
    }
}
