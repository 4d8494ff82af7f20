package dev.baton.checker;

import dev.baton.internal.Durations;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HolderIdsTest {
    @Test
    void holderIdNamesWorkerGenerationAndAttemptThread() {
        assertThat(Scenario.workerOf("w3.12/4711/abc#29")).contains(new Scenario.WorkerProcess(3, 12));
        assertThat(Analysis.keyOf("w3.12/4711/abc#29")).isEqualTo("w3.12#29");
        assertThat(Scenario.workerOf("checker/4711/abc#1")).isEmpty();
        assertThat(Scenario.workerOf(null)).isEmpty();
    }

    @Test
    void sessionHolderNamesWorkerGenerationOnly() {
        String pg = Scenario.sessionHolder(3, 12, "baton w3.12/4711/abc (pid 812)");
        assertThat(pg).isEqualTo("w3.12/session baton w3.12/4711/abc (pid 812)");
        assertThat(Scenario.workerOf(pg)).contains(new Scenario.WorkerProcess(3, 12));
        assertThat(Scenario.isSessionHolder(pg)).isTrue();
        assertThat(Scenario.isSessionHolder(Scenario.sessionHolder(0, 1, "connection 57"))).isTrue();
        assertThat(Scenario.isSessionHolder("w3.12/4711/abc#29")).isFalse();
        assertThat(Scenario.isSessionHolder("baton w3.12/4711/abc (pid 812)")).isFalse();
        assertThat(Scenario.isSessionHolder(null)).isFalse();
    }

    @Test
    void strategiesKnowSession() {
        CheckStrategy s = Strategies.byName("session");
        assertThat(s).isInstanceOf(JdbcSessionStrategy.class);
        assertThat(Strategies.workerArgument(s)).isEqualTo("session");
        assertThat(s.sessionKillEndsHolds()).isTrue();
        assertThat(Strategies.byName("lease").sessionKillEndsHolds()).isFalse();
        java.time.Duration lease = java.time.Duration.ofSeconds(2);
        assertThat(s.handOver("pause", "", lease).fromEnd()).isTrue();
        assertThat(s.handOver("kill", "", lease).fromEnd()).isFalse();
        assertThat(s.handOver("partition", "reset", lease).fromEnd()).isFalse();
        assertThat(s.handOver("partition", "blackhole", lease).fromEnd()).isTrue();
        assertThat(Strategies.byName("lease").handOver("partition", "drop-responses", lease).fromEnd()).isTrue();
        assertThat(Strategies.byName("lease").handOver("session-kill", "", lease).due()).isFalse();
    }

    @Test
    void durationsParse() {
        assertThat(Durations.parse("--lease", "500ms").toMillis()).isEqualTo(500);
        assertThat(Durations.parse("--lease", "2s").toMillis()).isEqualTo(2000);
        assertThat(Durations.parse("--duration", "1m").toSeconds()).isEqualTo(60);
    }
}
