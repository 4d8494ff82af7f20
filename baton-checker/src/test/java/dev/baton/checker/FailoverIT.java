package dev.baton.checker;

import dev.baton.testkit.HaServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton check --faults failover --allow-failover} on each deployment of {@code scripts/start-servers.sh --ha}
 * (the quick profile, faults until one failover has hit a holder, {@code --until-hits}), through the URL the script
 * prints with the settings docs/OPERATIONS.md recommends. The failover makes the deployment whole again (the killed server back as a follower), so the
 * deployments stay running for the next test and the next build; {@link HaServers#url} heals whatever a failed run
 * left behind.
 */
class FailoverIT {
    private static final Pattern NOTE = Pattern.compile("(failover|switchover) at t\\+[0-9.]+s \\((.*?)\\): first grant"
            + " (\\d+) ms after the kill.*?highest token before (-?\\d+), lowest begun after (\\d+|none) \\((above|NOT"
            + " above)\\); holders at the kill (\\d+)");

    @TempDir
    Path dir;

    private String check(String url, String fault) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--profile", "quick",
                // until the failover hits a holder (it ends the faults then), with room for a second one if the
                // first finds nobody holding: a failover with its 10 s gap after it takes some 20 s on Redis
                "--duration", "10s", "--until-hits", "--table", "baton_check_failover_it", "--url", url, "--faults", fault,
                "--allow-failover", "--work-dir", dir.toString());
        System.out.print(out);
        System.err.print(err);
        assertThat(status).as("exit status of baton check --faults %s on %s; output above", fault, url)
                .isEqualTo(CheckCommand.PASS);
        Matcher m = NOTE.matcher(out.toString());
        assertThat(m.find()).as("the failover note in the output above").isTrue();
        assertThat(m.group(6)).as("tokens begun after the failover against every token before it: " + m.group())
                .isEqualTo("above");
        return out.toString();
    }

    @Test
    void aZooKeeperEnsembleKeepsExclusionAndTokensAcrossTheLossOfItsLeader() {
        check(HaServers.url(HaServers.ZOOKEEPER), "failover");
    }

    @Test
    void redisBehindSentinelWithReplicaAcknowledgementKeepsExclusionAcrossAPrimaryKill() {
        String url = HaServers.url(HaServers.REDIS_SENTINEL);
        assertThat(url).contains("requireReplicas=1");
        check(url, "failover");
    }

    @Test
    void postgresqlWithASynchronousStandbyKeepsExclusionAcrossPromotion() {
        check(HaServers.url(HaServers.POSTGRESQL_STANDBY), "failover");
    }

    @Test
    void failoverNeedsAllowFailoverAndAUrlOfSeveralServers() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--url",
                "zookeeper://127.0.0.1:2191,127.0.0.1:2192,127.0.0.1:2193", "--faults", "failover");
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("--allow-failover");
        err.getBuffer().setLength(0);
        status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--url",
                "jdbc:postgresql://127.0.0.1:5442/test?user=postgres", "--faults", "failover", "--allow-failover");
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("names one server");
    }
}
