package dev.baton.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RunFastPath} reads a command line into the same fields picocli sets, or leaves it to picocli. No
 * process is started: both readers fill a {@link RunCommand}, which is compared field by field.
 */
class RunFastPathTest {

    @ParameterizedTest
    @ValueSource(strings = {
            "run --lock x -- true",
            "run --lock x true",
            "run --lock=x -- sh -c 'exit 3'",
            "run --lock x -w 5s --lease 2s --grace 1m30s --quiet -- a -b --c",
            "run --wait=1.5s --lock x --strategy SESSION --url jdbc:postgresql://h/db --table t -v -- true",
            "run --lock x -n --conflict-exit-code 9 --allow-unflushed-commits --allow-eviction -- true",
            "run --lock x -c echo",
            "run --lock x --command=echo --nonblock --verbose -q",
            "run -q --lock x -- -- true",
            "run --lock x -- --lock y",
            "run --lock x echo --lock y"})
    void readsWhatPicocliReads(String line) {
        String[] args = line.split(" ");
        RunCommand fast = RunFastPath.parse(args);
        assertThat(fast).as("read without picocli: %s", line).isNotNull();
        assertThat(fields(fast)).isEqualTo(fields(picocli(args)));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "run --help",
            "run --lock x --help -- true",
            "run -h --lock x -- true",
            "run --version",
            "run --lock x",
            "run --lock x -c echo -- true",
            "run --lock x --lock y -- true",
            "run --lock x -w 1s --wait 2s -- true",
            "run --lock x -n -w 1s -- true",
            "run --lock x -qv -- true",
            "run --lock x -w5s -- true",
            "run --lock x --wait 5x -- true",
            "run --lock x --lease 1ms -- true",
            "run --lock x --strategy other -- true",
            "run --lock x --conflict-exit-code 0 -- true",
            "run --lock x --conflict-exit-code nine -- true",
            "run --lock -- true",
            "run --lock x --unknown -- true",
            "run --lock= -- true",
            "run -- true",
            "run",
            "status --lock x",
            "run --lock x --url"})
    void leavesEverythingElseToPicocli(String line) {
        assertThat(RunFastPath.parse(line.split(" "))).as(line).isNull();
    }

    @Test
    void anOptionsValueMayLookLikeAnythingButAnOption() {
        RunCommand run = RunFastPath.parse(new String[] {"run", "--lock", "a b=c", "--", "true"});
        assertThat(run).isNotNull();
        assertThat(run.lockName).isEqualTo("a b=c");
        assertThat(RunFastPath.parse(new String[] {"run", "--lock", "-x", "--", "true"})).isNull();
    }

    @Test
    void defaultsAreTheAnnotations() {
        RunCommand run = RunFastPath.parse(new String[] {"run", "--lock", "x", "--", "true"});
        assertThat(run.lease).isEqualTo(Duration.ofSeconds(10)).isEqualTo(picocli("run", "--lock", "x", "true").lease);
        assertThat(run.grace).isEqualTo(Duration.ofSeconds(10));
    }

    private static RunCommand picocli(String... args) {
        CommandLine cli = BatonCommand.commandLine(new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()), args);
        CommandLine.ParseResult parsed = cli.parseArgs(args);
        return (RunCommand) parsed.subcommand().commandSpec().userObject();
    }

    private static List<Object> fields(RunCommand r) {
        DatabaseOptions d = r.database;
        return java.util.Arrays.asList(r.lockName, r.wait, r.nonblock, r.strategy, r.lease, r.grace,
                r.conflictExitCode, r.quiet, r.shellCommand, r.command, d.url, d.table, d.verbose,
                d.allowUnflushedCommits, d.allowEviction);
    }
}
