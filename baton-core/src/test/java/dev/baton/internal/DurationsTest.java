package dev.baton.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationsTest {

    @Test
    void parsesEveryUnit() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("10s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
    }

    @Test
    void zeroWithOrWithoutUnit() {
        assertThat(Durations.parse("0")).isZero();
        assertThat(Durations.parse("0s")).isZero();
        assertThat(Durations.parse("0ms")).isZero();
    }

    @Test
    void aBareNumberIsSecondsAsFlockAndTimeoutRead() {
        assertThat(Durations.parse("10")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("0.5")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("1.25")).isEqualTo(Duration.ofMillis(1250));
        assertThat(Durations.parse("2.007")).isEqualTo(Duration.ofMillis(2007));
    }

    @Test
    void aLeaseOfThreeMillionHoursIsRefusedByTheParserNotByAnOverflowLater() {
        assertThat(Durations.parse("2562047h")).isEqualTo(Durations.MAX);
        assertThatThrownBy(() -> Durations.parse("3000000h")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'3000000h' is too long a duration (at most 2562047h)");
        assertThatThrownBy(() -> Durations.parse("9999999999999999"))
                .hasMessageContaining("too long a duration");
    }

    @Test
    void requireAtMostNamesTheOptionTheBoundAndWhy() {
        assertThatThrownBy(() -> Durations.requireAtMost("--lease", Duration.ofHours(25), Duration.ofHours(24),
                "because"))
                .hasMessage("--lease must be at most 24h (because), was 25h");
        Durations.requireAtMost("--lease", Duration.ofHours(24), Duration.ofHours(24), "because");
        Durations.requireAtMost("--wait", null, Duration.ofHours(24), "because");
    }

    @Test
    void compoundDurationsAddTheirPartsFromTheLargestUnitDown() {
        assertThat(Durations.parse("1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(Durations.parse("2m30s")).isEqualTo(Duration.ofSeconds(150));
        assertThat(Durations.parse("1h2m3s4ms")).isEqualTo(Duration.ofMillis(3_723_004));
        assertThat(Durations.parse("1s500ms")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("1h0m")).isEqualTo(Duration.ofHours(1));
    }

    @Test
    void aUnitTakesUpToThreeDecimals() {
        assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("0.25m")).isEqualTo(Duration.ofSeconds(15));
        assertThat(Durations.parse("1.5h")).isEqualTo(Duration.ofMinutes(90));
        assertThat(Durations.parse("1h0.5m")).isEqualTo(Duration.ofSeconds(3630));
        assertThat(Durations.parse("0.001s")).isEqualTo(Duration.ofMillis(1));
    }

    @Test
    void lessThanAMillisecondIsRefused() {
        assertThatThrownBy(() -> Durations.parse("1.5ms"))
                .hasMessage("'1.5ms' is not a whole number of milliseconds (like 500ms, 10s, 1.5s, 2m, 1h30m, or a"
                        + " number of seconds such as 10 or 0.5)");
    }

    @Test
    void unitsOutOfOrderOrRepeatedAreRefusedSayingSo() {
        for (String text : new String[] {"30m1h", "1m1m", "1s1m", "500ms1s"}) {
            assertThatThrownBy(() -> Durations.parse(text)).as(text)
                    .hasMessageStartingWith("'" + text + "' is not a duration: write each unit once, from the"
                            + " largest down (h, m, s, ms)");
        }
    }

    @Test
    void aCompoundDurationTooLongIsRefused() {
        assertThatThrownBy(() -> Durations.parse("2562047h1ms")).hasMessageContaining("too long a duration");
    }

    @ParameterizedTest
    @ValueSource(strings = {"5x", "1.2345", ".5", "5.", "-1s", "+1s", "1.2345s", "1 s", " 1s", "s", "", "1S", "1sec",
            "1d", "abc", "1ms2", "9999999999999999999h", "1h 30m", "1h30", "h1", "1.s", "1h-30m"})
    void refusesAnythingElse(String text) {
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + text + "'");
    }

    @Test
    void refusesOverflowWithAClearMessage() {
        assertThatThrownBy(() -> Durations.parse("999999999999999999h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too long");
    }

    @Test
    void messageListsTheAcceptedForms() {
        assertThatThrownBy(() -> Durations.parse("5x"))
                .hasMessage("'5x' is not a duration: write a number and a unit (ms, s, m or h), several from the"
                        + " largest unit down, or a number of seconds, like 500ms, 10s, 1.5s, 2m, 1h30m, or a number"
                        + " of seconds such as 10 or 0.5");
    }

    @Test
    void theCheckersOptionsNameTheOptionInTheMessage() {
        assertThat(Durations.parse("--lease", "500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("--duration", "6")).isEqualTo(Duration.ofSeconds(6));
        assertThatThrownBy(() -> Durations.parse("--duration", "6x"))
                .hasMessageStartingWith("--duration: '6x' is not a duration: ");
    }

    @Test
    void formatRoundTrips() {
        for (String s : new String[] {"0", "250ms", "1500ms", "10s", "90s", "2m", "1h"}) {
            assertThat(Durations.format(Durations.parse(s))).isEqualTo(s);
        }
    }
}
