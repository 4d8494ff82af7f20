package dev.baton.checker;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class BatonVersionTest {
    @Test
    void isTheBuildsProjectVersion() {
        String expected = System.getProperty("baton.expectedVersion");
        assertThat(expected).as("set by the pom's surefire configuration").isNotBlank().doesNotContain("${");

        assertThat(BatonVersion.current()).isEqualTo(expected);
    }

    @Test
    void theStandaloneCheckerPrintsIt() {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new CheckCommand()).setOut(new PrintWriter(out));

        assertThat(cli.execute("--version")).isZero();
        assertThat(out.toString().strip()).isEqualTo("baton check " + System.getProperty("baton.expectedVersion"));
    }
}
