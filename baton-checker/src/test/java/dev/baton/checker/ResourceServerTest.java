package dev.baton.checker;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ResourceServerTest {
    @Test
    void strictFenceRefusesStaleReadsAndWritesAndRecordsThem() throws Exception {
        try (ResourceServer r = new ResourceServer(Fence.STRICT)) {
            assertThat(r.handle("BEGIN l 5 a1")).isEqualTo("OK 0");
            assertThat(r.handle("READ l 5 a1")).isEqualTo("OK 0");
            assertThat(r.handle("BEGIN l 6 a2")).isEqualTo("OK 0");
            assertThat(r.handle("READ l 5 a1")).isEqualTo("STALE 6");
            assertThat(r.handle("WRITE l 5 a1 1")).isEqualTo("STALE 6");
            assertThat(r.handle("WRITE l 6 a2 1")).isEqualTo("OK 1");
            assertThat(r.counters()).containsEntry("l", 1L);
            assertThat(r.accesses()).hasSize(6).filteredOn(a -> !a.accepted()).hasSize(2);
        }
    }
}
