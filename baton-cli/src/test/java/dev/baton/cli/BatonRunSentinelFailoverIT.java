package dev.baton.cli;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.faultproxy.FaultProxy;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.OwnSentinels;
import dev.baton.testkit.OwnServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static dev.baton.testkit.OwnSentinels.redisCli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An old holder under {@code baton run} is told when a failover lost its grant: on a Sentinel deployment of the
 * test's own (no {@code WAIT}), {@code baton run} takes a lock while the replica is cut off (its link through a
 * {@link FaultProxy}, black-holed), so the grant is on the primary only; the primary is killed and the Sentinels
 * promote the replica, where a second client is granted the lock. The {@code baton run} must end its command and exit
 * 76 (its lease lost), never run on as a second holder. The Sentinels are down after
 * {@link OwnSentinels#DOWN_AFTER_MS} (a shorter time can fail over a second time, back to the old primary) and the
 * replica syncs without Redis's 5 s wait ({@code scripts/own-server.sh}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BatonRunSentinelFailoverIT {
    @TempDir
    Path dir;

    @Test
    void aBatonRunWhoseGrantTheFailoverLostExits76() throws Exception {
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS);
             FaultProxy link = new FaultProxy("127.0.0.1", primary.port());
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--replicaof", "127.0.0.1",
                     Integer.toString(link.port()));
             OwnSentinels sentinels = OwnSentinels.watch("runfailover", primary.port())) {
            String url = sentinels.url("");
            await().atMost(Duration.ofSeconds(60)).until(() -> redisCli(primary.port(), "info", "replication")
                    .contains("state=online") && sentinels.ready(replica.port()));
            link.fault(FaultProxy.Mode.BLACKHOLE); // from here on the replica gets nothing
            Path started = dir.resolve("started");
            CompletableFuture<BatonAdminIT.Result> run = CompletableFuture.supplyAsync(() -> baton("run", "--url", url,
                    "--lock", "job", "--lease", "3s", "--grace", "1s", "--", "sh", "-c", "touch \"$0\"; exec sleep 120",
                    started.toString()));
            await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(started) || run.isDone());
            assertThat(run.isDone()).as("baton run ended before its command started: %s", run.getNow(null)).isFalse();
            long killed = System.nanoTime();
            primary.crash();
            await().atMost(Duration.ofSeconds(60)).until(() -> sentinels.primaryPort().equals(Optional.of(replica.port()))
                    && redisCli(replica.port(), "role").startsWith("master"));
            try (LockClient second = RedisLocks.builder(url).leaseTime(Duration.ofSeconds(3)).build();
                 Lease granted = second.lock("job").acquire(Duration.ofSeconds(20))) {
                assertThat(granted.isValid()).as("the promoted replica grants the lock it never got").isTrue();
                BatonAdminIT.Result r = run.get(60, TimeUnit.SECONDS);
                assertThat(r.status()).as("baton run's exit status; stderr: %s", r.err()).isEqualTo(76);
                System.out.printf("baton run (lease 3 s) whose grant a Redis Sentinel failover lost exited 76 %d ms"
                        + " after the primary was killed%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
            }
        }
    }
}
