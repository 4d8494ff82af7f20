package dev.baton.checker;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonTest {
    @Test
    void roundTripsWhatTheWorkersWrite() {
        String line = Json.object("t", 123456789012L, "type", "ok", "msg", "a \"quoted\"\nline\\", "skip", null,
                "flag", true, "neg", -5L);
        Map<String, Object> m = Json.parseFlat(line);
        assertThat(m).containsEntry("t", 123456789012L).containsEntry("type", "ok")
                .containsEntry("msg", "a \"quoted\"\nline\\").containsEntry("flag", true).containsEntry("neg", -5L)
                .doesNotContainKey("skip");
    }

    @Test
    void refusesATornLine() {
        assertThatThrownBy(() -> Json.parseFlat("{\"t\":12,\"type\":\"ok")).isInstanceOf(IllegalArgumentException.class);
    }
}
