package dev.baton.checker;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class CheckVersionTest {
    @Test
    void theStandaloneCheckerPrintsIt() {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new CheckCommand()).setOut(new PrintWriter(out));

        assertThat(cli.execute("--version")).isZero();
        assertThat(out.toString().strip()).isEqualTo("baton check " + System.getProperty("baton.expectedVersion"));
    }
}
