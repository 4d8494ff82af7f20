package dev.baton.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CommandGroupTest {
    @Test
    void uptimeIsReadInHundredthsOfASecond() {
        assertThat(CommandGroup.centis("350735.47 1234.50\n")).isEqualTo(35_073_547L);
        assertThat(CommandGroup.centis("0.05")).isEqualTo(5L);
    }

    @Test
    void anythingButUptimeIsUnknown() {
        assertThat(CommandGroup.centis("")).isEqualTo(-1L);
        assertThat(CommandGroup.centis("12.3")).isEqualTo(-1L);
        assertThat(CommandGroup.centis("-1.00")).isEqualTo(-1L);
        assertThat(CommandGroup.centis("abc")).isEqualTo(-1L);
    }
}
