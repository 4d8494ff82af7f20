package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The session strategy in CI, kept apart from {@link QuickProfileIT} so the quick profile stays under two
 * minutes: {@code --strategy session} on PostgreSQL under kill and session-kill (the two faults that end a
 * session, so the server must hand the lock over at once), lease 1 s, 8 s per scenario ({@code --until-hits}: less
 * once 5 faults hit, more while fewer did). Its own table, so a concurrent run of the quick profile on the same server cannot disturb it.
 */
class SessionStrategyIT {
    @TempDir
    Path dir;

    @Test
    void postgresqlKillAndSessionKill() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--strategy", "session",
                "--profile", "quick", "--duration", "8s", "--until-hits", "--table", "baton_check_session_it",
                "--url", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres", "--faults", "kill,session-kill",
                "--seed", "42", "--work-dir", dir.toString());
        System.out.print(out);
        System.err.print(err);
        assertThat(status).as("exit status of baton check --strategy session; output above").isEqualTo(CheckCommand.PASS);
        assertThat(out.toString()).contains("strategy session").doesNotContain("INCONCLUSIVE");
    }

    @Test
    void sqliteIsRefusedWithAReason() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--strategy", "session",
                "--url", "jdbc:sqlite:" + dir.resolve("check.db"));
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("SQLite").contains("no session locks").contains("--strategy lease");
    }
}
