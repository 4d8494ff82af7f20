package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checker's newer modes in CI, each short (quick profile, 6 s of faults, its own table): {@code --strategy
 * run-once} under pause on PostgreSQL, and {@code --pool}: run-once on a pool whose connections default to
 * {@code autoCommit=false} on MariaDB (where a grant that is never committed makes two machines run the task),
 * and the session strategy through PgBouncer in transaction mode, which it must refuse clearly.
 */
class RunOnceAndPoolsIT {
    static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

    @TempDir
    Path dir;

    private String check(int expected, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] all = new String[args.length + 11];
        System.arraycopy(new String[] {"--profile", "quick", "--duration", "6s", "--until-hits", "--seed", "42",
                "--table", "baton_check_modes_it", "--work-dir", dir.toString()}, 0, all, 0, 11);
        System.arraycopy(args, 0, all, 11, args.length);
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), all);
        System.out.print(out);
        System.err.print(err);
        assertThat(status).as("exit status of baton check %s; output above", String.join(" ", args)).isEqualTo(expected);
        return out.toString();
    }

    @Test
    void runOnceUnderPausePassesOnPostgresql() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        assertThat(check(CheckCommand.PASS, "--strategy", "run-once", "--url", PG, "--faults", "pause"))
                .contains("strategy run-once").contains("(a) no overlap");
    }

    @Test
    void runOnceOnAnAutoCommitOffPoolPassesOnMariadb() {
        TestServers.require("MariaDB", "127.0.0.1", 3306);
        assertThat(check(CheckCommand.PASS, "--strategy", "run-once", "--pool", "autocommit-off", "--url", MARIADB,
                "--faults", "kill")).contains("pool autocommit-off");
    }

    @Test
    void sessionStrategyRefusesPgBouncerClearly() {
        TestServers.require("PgBouncer", "127.0.0.1", 6432);
        assertThat(check(CheckCommand.PASS, "--strategy", "session", "--pool", "pgbouncer", "--url", PG, "--faults",
                "kill")).contains("REFUSED").contains("refused --pool pgbouncer").containsIgnoringCase("pooler");
    }

    @Test
    void pgbouncerNeedsAPostgresqlUrl() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--pool", "pgbouncer",
                "--url", MARIADB);
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("PgBouncer speaks PostgreSQL only");
    }
}
