package dev.baton.checker;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HolderIdsTest {
    @Test
    void holderIdNamesWorkerGenerationAndAttemptThread() {
        assertThat(Scenario.workerOf("w3.12/4711/abc#29")).containsExactly(3, 12);
        assertThat(Analysis.keyOf("w3.12/4711/abc#29")).isEqualTo("w3.12#29");
        assertThat(Scenario.workerOf("checker/4711/abc#1")).isNull();
        assertThat(Scenario.workerOf(null)).isNull();
    }

    @Test
    void durationsParse() {
        assertThat(Durations.parse("--lease", "500ms").toMillis()).isEqualTo(500);
        assertThat(Durations.parse("--lease", "2s").toMillis()).isEqualTo(2000);
        assertThat(Durations.parse("--duration", "1m").toSeconds()).isEqualTo(60);
    }
}
