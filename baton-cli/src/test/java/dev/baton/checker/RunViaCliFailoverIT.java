package dev.baton.checker;

import dev.baton.testkit.HaServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton check --via-cli --faults failover --allow-failover} on the PostgreSQL primary + standby of
 * {@code scripts/start-servers.sh --ha} ({@code --via-cli} runs on SQL databases only; the quick profile: lease 1 s,
 * one failover): every worker is a real {@code baton run}, and the primary is crashed and the standby promoted
 * while a command runs. A run whose lease is lost meanwhile must stop its command and exit 76, no stale access may
 * be accepted, nothing of a finished grant may survive it, and a command must begin on the new primary: the
 * scenario must PASS. The failover makes the deployment whole again (the old primary re-created as a standby);
 * {@link HaServers#url} heals what a failed run left behind.
 */
class RunViaCliFailoverIT {
    @TempDir
    Path dir;

    private void check(String deployment) {
        String url = HaServers.url(deployment);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--via-cli",
                "--profile", "quick", "--duration", "5s", "--url", url, "--table", "baton_runcli_failover_it",
                "--faults", "failover", "--allow-failover", "--seed", "42", "--work-dir", dir.toString());
        System.out.print(out);
        assertThat(status).as("exit status of baton check --via-cli --faults failover on %s; output:%n%s%n%s", url,
                out, err).isEqualTo(CheckCommand.PASS);
        assertThat(out.toString()).contains("/ via baton run / failover: PASS").contains("note: failover 1 at");
    }

    @Test
    void postgresqlWithItsPrimaryCrashedAndTheStandbyPromotedUnderRunningCommands() {
        check(HaServers.POSTGRESQL_STANDBY);
    }
}
