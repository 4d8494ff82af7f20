package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton check --faults restart --allow-restart}: one restart of each server (PostgreSQL, MariaDB, Redis, ZooKeeper)
 * while workers hold leases, in the quick profile with 5 s of faults; tokens must stay monotonic across it
 * ((b)) and every lock must be granted again within its bound after the server is back ((c), (d)). It
 * restarts the servers of this machine: CI runs the integration tests one at a time, so nothing else uses
 * them meanwhile; never run it beside other tests on a shared machine. Its own table.
 */
class RestartIT {
    @TempDir
    Path dir;

    private void check(String url, String strategy) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--profile", "quick",
                "--strategy", strategy, "--duration", "5s", "--table", "baton_check_restart_it", "--url", url,
                "--faults", "restart", "--allow-restart", "--seed", "42", "--work-dir", dir.toString());
        System.out.print(out);
        System.err.print(err);
        assertThat(status).as("exit status of baton check --faults restart on %s; output above", url)
                .isEqualTo(CheckCommand.PASS);
        assertThat(out.toString()).contains("× restart");
    }

    @Test
    void postgresqlRestartKeepsTokensMonotonicAndLocksRecover() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        check("jdbc:postgresql://127.0.0.1:5432/test?user=postgres", "lease");
    }

    @Test
    void mariadbRestartKeepsTokensMonotonicAndLocksRecover() {
        TestServers.require("MariaDB", "127.0.0.1", 3306);
        check("jdbc:mariadb://127.0.0.1:3306/test?user=root", "lease");
    }

    /** Redis runs without persistence here: a restart loses every key, so tokens rest on the seed from TIME. */
    @Test
    void redisRestartKeepsTokensMonotonicAndLocksRecover() {
        TestServers.requireRedis();
        check("redis://127.0.0.1:6379", "redis");
    }

    /** ZooKeeper keeps its data (and its sessions) on disk: holders keep their locks across the restart. */
    @Test
    void zookeeperRestartKeepsTokensMonotonicAndLocksRecover() {
        TestServers.requireZooKeeper();
        check("zookeeper://127.0.0.1:2181", "zookeeper");
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
        assertThat(err.toString()).contains("not this host").contains("scripts/start-servers.sh");
    }
}
