package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CI's run of {@code baton check --via-cli --profile quick} (lease 1 s, short scenarios): every worker is a
 * real {@code baton run} process (this module's class path holds the CLI), its command a fenced program with a
 * grandchild. SQLite with the JVM-only pause (a lost lease under a running command: exit 76), PostgreSQL
 * with kill -9 of the JVM and the pause of the whole tree. Each must PASS. The table names are this test's
 * own, as other builds share the servers.
 */
class RunViaCliIT {
    @TempDir
    Path dir;

    private void check(String url, String faults) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--via-cli",
                "--profile", "quick", "--duration", "8s", "--url", url, "--table", "baton_runcli_it",
                "--faults", faults, "--seed", "42", "--work-dir", dir.resolve(faults).toString());
        assertThat(status).as("exit status of baton check --via-cli on %s (%s); output:%n%s%n%s", url, faults, out, err)
                .isEqualTo(CheckCommand.PASS);
        assertThat(out.toString()).contains("PASS");
        System.out.print(out);
    }

    @Test
    void sqliteWithTheJvmPaused() {
        check("jdbc:sqlite:" + dir.resolve("check.db"), "pause-jvm");
    }

    /** A baton run killed while it waits in line: the lock, once free, goes to a live one within the line's bound. */
    @Test
    void postgresqlWithAWaiterKilled() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        check("jdbc:postgresql://127.0.0.1:5432/test?user=postgres", "kill-waiter");
    }

    @Test
    void postgresqlWithTheJvmKilledAndTheTreePaused() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        check("jdbc:postgresql://127.0.0.1:5432/test?user=postgres", "kill,pause-tree");
    }
}
