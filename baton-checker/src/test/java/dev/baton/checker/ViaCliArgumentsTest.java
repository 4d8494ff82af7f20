package dev.baton.checker;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --via-cli} refuses what {@code baton run} cannot do, before starting anything. */
class ViaCliArgumentsTest {
    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new String[] {Integer.toString(status), err.toString()};
    }

    @Test
    void onlyTheStrategiesBatonRunOffers() {
        String[] r = run("--via-cli", "--strategy", "run-once", "--url", "jdbc:sqlite:/tmp/x.db");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("--strategy lease or session").contains("run-once");
    }

    /** Its scenarios run a loop of their own, which does not stop at the hits a PASS needs. */
    @Test
    void untilHitsIsRefused() {
        String[] r = run("--via-cli", "--until-hits", "--url", "jdbc:sqlite:/tmp/x.db");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("--until-hits").contains("--via-cli");
    }

    @Test
    void faultsOfThisModeByName() {
        String[] r = run("--via-cli", "--faults", "pause", "--url", "jdbc:sqlite:/tmp/x.db");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("unknown fault 'pause'").contains("pause-jvm, pause-tree, kill, hup");
    }

    /** The failover fault runs through baton run as in the worker mode: only when asked to mean it. */
    @Test
    void failoverNeedsAllowFailover() {
        String[] r = run("--via-cli", "--faults", "failover", "--url",
                "zookeeper://127.0.0.1:2191,127.0.0.1:2192,127.0.0.1:2193");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("--faults failover kills the leader").contains("add --allow-failover");
    }

    @Test
    void failoverNeedsADeploymentOfSeveralServers() {
        String[] r = run("--via-cli", "--faults", "failover", "--allow-failover", "--url", "jdbc:sqlite:/tmp/x.db");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("--faults failover: 'jdbc:sqlite:/tmp/x.db' is not a ZooKeeper ensemble");
    }

    /** Redis and ZooKeeper (their failover included) are checked by the worker mode; the sentence says so. */
    @Test
    void sqlDatabasesOnlyAndTheWorkerModeNamedForTheOthers() {
        String[] r = run("--via-cli", "--faults", "failover", "--allow-failover", "--url",
                "redis-sentinel://127.0.0.1:26390,127.0.0.1:26391,127.0.0.1:26392/0#baton");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("--via-cli runs its baton run workers on SQL databases (jdbc: URLs) only, not on Redis")
                .contains("check it without --via-cli (the worker mode, whose faults include failover");
        r = run("--via-cli", "--url", "zookeeper://127.0.0.1:2191,127.0.0.1:2192,127.0.0.1:2193");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("only, not on ZooKeeper");
    }

    @Test
    void noPoolToChoose() {
        String[] r = run("--via-cli", "--pool", "small", "--url", "jdbc:sqlite:/tmp/x.db");
        assertThat(r[0]).isEqualTo("64");
        assertThat(r[1]).contains("baton run has no pool to choose");
    }
}
