package dev.baton.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BatonVersionTest {
    @Test
    void isTheBuildsProjectVersion() {
        String expected = System.getProperty("baton.expectedVersion");
        assertThat(expected).as("set by the pom's surefire configuration").isNotBlank().doesNotContain("${");

        assertThat(BatonVersion.current()).isEqualTo(expected);
    }
}
