package dev.baton.cli;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code baton run}'s option bounds: exit 64 with one line naming the option, never an overflow (exit 70). */
class RunOptionsTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--lease|3000000h|'3000000h' is too long a duration (at most 2562047h)",
            "--lease|25h|--lease must be at most 24h",
            "--wait|9000h|--wait must be at most 8784h",
            "-w|99999999999999999|too long a duration",
            "--grace|2h|--grace must be at most 1h",
            "--conflict-exit-code|0|--conflict-exit-code must be 1 to 255, was 0",
            "--conflict-exit-code|256|--conflict-exit-code must be 1 to 255, was 256"})
    void outOfBoundsValuesExit64NamingTheOption(String option, String value, String message) {
        BatonCommandTest.Result r = BatonCommandTest.baton("run", "--lock", "x", option, value, "--", "true");

        assertThat(r.status()).as("stderr: %s", r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.errLines()).singleElement().asString().startsWith("baton: ").contains(message);
    }
}
