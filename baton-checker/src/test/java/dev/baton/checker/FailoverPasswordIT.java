package dev.baton.checker;

import dev.baton.testkit.OwnSentinels;
import dev.baton.testkit.OwnServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.baton.testkit.OwnSentinels.redisCli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code failover} fault on a Redis Sentinel deployment that asks for a password (of the test's own: primary and
 * replica with {@code requirepass}, Sentinels with {@code auth-pass}), through a URL that carries it: the fault finds
 * the primary's config file, kills it, and brings it back as the promoted replica's replica.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FailoverPasswordIT {
    @Test
    void theFailoverFaultTalksToPasswordProtectedRedisWithTheUrlsPassword() throws Exception {
        // own Redis servers sync without Redis's 5 s wait (scripts/own-server.sh), own Sentinels are down after 3 s,
        // not less (OwnSentinels.DOWN_AFTER_MS: a shorter time let the Sentinels fail over a second time here)
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", "s3cret", "--masterauth",
                "s3cret");
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", "s3cret", "--masterauth",
                     "s3cret", "--replicaof", "127.0.0.1", Integer.toString(primary.port()));
             OwnSentinels sentinels = OwnSentinels.watch("secured", primary.port())) {
            for (int port : sentinels.ports()) {
                assertThat(redisCli(port, "sentinel", "set", "secured", "auth-pass", "s3cret")).startsWith("OK");
            }
            String url = sentinels.url("").replace("redis-sentinel://", "redis-sentinel://s3cret@");
            await().atMost(Duration.ofSeconds(60)).until(() -> sentinels.ready(replica.port()));
            // the replica's first sync done: a primary killed while it forks for the sync is another scenario (the
            // Sentinels list a replica as soon as it connects, before its sync)
            await().atMost(Duration.ofSeconds(60)).until(() -> redisCli(replica.port(), "-a", "s3cret",
                    "--no-auth-warning", "info", "replication").contains("master_link_status:up"));
            Failover failover = Failover.of(url);
            failover.requireProcesses();
            Failover.Outcome o = failover.prepare().run();
            assertThat(o.description()).contains("back as its replica").doesNotContain("s3cret");
            // the old primary, started again by the fault rather than by the test kit: stopped here
            ListeningProcess.of(primary.port()).ifPresent(p -> p.handle().destroyForcibly());
        }
    }

    /**
     * Sentinels with a password of their own ({@code requirepass}), apart from the data nodes': the URL carries it as
     * {@code sentinelPassword}, and the fault asks the Sentinels with it (the clients' library does the same).
     */
    @Test
    void theFailoverFaultTalksToSentinelsWithTheirOwnPassword() throws Exception {
        String sentinelPassword = "s3ntinel-only";
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", "s3cret", "--masterauth",
                "s3cret");
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", "s3cret", "--masterauth",
                     "s3cret", "--replicaof", "127.0.0.1", Integer.toString(primary.port()));
             OwnSentinels sentinels = OwnSentinels.watch("guarded", primary.port(), "--requirepass",
                     sentinelPassword, "--sentinel", "auth-pass", "guarded", "s3cret",
                     "--sentinel", "sentinel-pass", sentinelPassword)) {
            String url = sentinels.url("?sentinelPassword=" + sentinelPassword)
                    .replace("redis-sentinel://", "redis-sentinel://s3cret@");
            // OwnSentinels.ready() asks without a password: the same checks with the Sentinels' one
            await().atMost(Duration.ofSeconds(60)).until(() -> sentinels.ports().stream().allMatch(port ->
                    redisCli(port, "-a", sentinelPassword, "--no-auth-warning", "sentinel", "ckquorum", "guarded")
                            .startsWith("OK 3 usable")
                    && redisCli(port, "-a", sentinelPassword, "--no-auth-warning", "sentinel", "replicas", "guarded")
                            .contains(Integer.toString(replica.port()))));
            await().atMost(Duration.ofSeconds(60)).until(() -> redisCli(replica.port(), "-a", "s3cret",
                    "--no-auth-warning", "info", "replication").contains("master_link_status:up"));
            Failover failover = Failover.of(url);
            failover.requireProcesses();
            Failover.Outcome o = failover.prepare().run();
            assertThat(o.description()).contains("back as its replica").doesNotContain("s3cret")
                    .doesNotContain(sentinelPassword);
            ListeningProcess.of(primary.port()).ifPresent(p -> p.handle().destroyForcibly());
        }
    }
}
