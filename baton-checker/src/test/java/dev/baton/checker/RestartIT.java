package dev.baton.checker;

import dev.baton.testkit.OwnServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton check --faults restart --allow-restart}: one restart of each server (PostgreSQL, MariaDB, Redis,
 * ZooKeeper) while workers hold leases, in the quick profile with at most 5 s of faults ({@code --until-hits}: they
 * end once the restart hit); tokens must stay monotonic across it ((b)) and every lock must be granted again within
 * its bound after the server is back ((c), (d)). Each runs on a server of its own ({@link OwnServer}), never on the
 * servers a developer already runs: the fault restarts the server listening on the URL's port, and only it.
 */
class RestartIT {
    @TempDir
    Path dir;

    private String check(String url, String strategy, String fault) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--profile", "quick",
                "--strategy", strategy, "--duration", "5s", "--until-hits", "--table", "baton_check_restart_it",
                "--url", url, "--faults", fault, "--allow-restart", "--seed", "42", "--work-dir", dir.toString());
        System.out.print(out);
        System.err.print(err);
        assertThat(status).as("exit status of baton check --faults %s on %s; output above", fault, url)
                .isEqualTo(CheckCommand.PASS);
        assertThat(out.toString()).contains("× " + fault);
        return out.toString();
    }

    private void restart(OwnServer.Engine engine, String strategy) {
        try (OwnServer server = OwnServer.start(engine)) {
            long pid = ListeningProcess.of(server.port()).orElseThrow().handle().pid();
            check(server.url(), strategy, "restart");
            long after = ListeningProcess.of(server.port()).orElseThrow().handle().pid();
            assertThat(after).as("the server listening on port %d after the restart", server.port()).isNotEqualTo(pid);
        }
    }

    @Test
    void postgresqlRestartKeepsTokensMonotonicAndLocksRecover() {
        restart(OwnServer.Engine.POSTGRESQL, "lease");
    }

    @Test
    void mariadbRestartKeepsTokensMonotonicAndLocksRecover() {
        restart(OwnServer.Engine.MARIADB, "lease");
    }

    /** Redis runs without persistence here: a restart loses every key, so tokens rest on the seed from TIME. */
    @Test
    void redisRestartKeepsTokensMonotonicAndLocksRecover() {
        restart(OwnServer.Engine.REDIS, "redis");
    }

    /** ZooKeeper keeps its data (and its sessions) on disk: holders keep their locks across the restart. */
    @Test
    void zookeeperRestartKeepsTokensMonotonicAndLocksRecover() {
        restart(OwnServer.Engine.ZOOKEEPER, "zookeeper");
    }

    /** The session-kill fault asked JMX port 2182 whatever the server; it asks the server's own JMX port. */
    @Test
    void zookeeperSessionKillUsesTheJmxPortOfTheServerUnderTest() {
        try (OwnServer server = OwnServer.start(OwnServer.Engine.ZOOKEEPER)) {
            assertThat(server.jmxPort()).isNotEqualTo(2182);
            check(server.url(), "zookeeper", "session-kill");
        }
    }

    @Test
    void restartNeedsAllowRestart() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--url",
                "jdbc:postgresql://127.0.0.1:5432/test?user=postgres", "--faults", "restart");
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("--allow-restart");
    }

    @Test
    void restartRefusesARemoteServer() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--url",
                "jdbc:postgresql://192.0.2.1:5432/test?user=postgres", "--faults", "restart", "--allow-restart");
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("not this host");
    }

    /** Seen: a restart of a URL whose port nothing listens on restarted the server of start-servers.sh instead. */
    @Test
    void restartRefusesAPortNoServerListensOn() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--url",
                "zookeeper://127.0.0.1:1", "--faults", "restart", "--allow-restart");
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("listens on port 1");
    }
}
