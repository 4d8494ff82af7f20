package dev.baton.redis;

import dev.baton.Lease;
import dev.baton.NothingGrantedException;
import dev.baton.LockClient;
import dev.baton.LockConfigurationException;
import dev.baton.testkit.OwnServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Servers set up the way Baton cannot keep its promises on, each a Redis of the test's own. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisServerSettingsIT {

    private static RedisLocks.Builder on(OwnServer redis) {
        return RedisLocks.builder(RedisURI.create(redis.host(), redis.port())).commandTimeout(Duration.ofSeconds(2));
    }

    @Test
    void aRedisThatMayEvictLockKeysIsRefusedAtBuild() {
        for (String policy : new String[] {"allkeys-lru", "volatile-lru"}) {
            try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS, "--maxmemory", "64mb",
                    "--maxmemory-policy", policy)) {
                assertThatThrownBy(() -> on(redis).build().close()).as(policy)
                        .isInstanceOf(LockConfigurationException.class)
                        .hasMessageContaining("maxmemory is 67108864 bytes with maxmemory-policy " + policy)
                        .hasMessageContaining("noeviction").hasMessageContaining("allowEviction()");
                try (LockClient c = on(redis).allowEviction().build();
                     Lease l = c.lock("evictable").acquire(Duration.ofSeconds(1))) {
                    assertThat(l.isValid()).as("opted in").isTrue();
                }
            }
        }
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS, "--maxmemory", "64mb",
                "--maxmemory-policy", "noeviction");
             LockClient c = on(redis).build();
             Lease l = c.lock("kept").acquire(Duration.ofSeconds(1))) {
            assertThat(l.isValid()).as("noeviction is accepted").isTrue();
        }
    }

    @Test
    void aRedisClusterNodeIsRefusedAtBuild(@TempDir Path dir) {
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS, "--cluster-enabled", "yes",
                "--cluster-config-file", dir.resolve("nodes.conf").toString())) {
            assertThatThrownBy(() -> on(redis).build().close())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("Redis Cluster").hasMessageContaining("cluster_enabled:1")
                    .hasMessageContaining("cluster-enabled no");
        }
    }

    @Test
    void anAcquireOnAReadOnlyReplicaIsADefiniteRefusal() {
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS);
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--replicaof", "127.0.0.1",
                     Integer.toString(primary.port()));
             LockClient c = on(replica).build()) {
            assertThatThrownBy(() -> c.lock("on-replica").acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(NothingGrantedException.class)
                    .hasMessageContaining("read-only replica").hasMessageContaining("nothing was granted")
                    .hasMessageNotContaining("unknown outcome");
        }
    }

    @Test
    void anAcquireOnARedisOutOfMemoryIsADefiniteRefusal() {
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS, "--maxmemory", "4mb",
                "--maxmemory-policy", "noeviction");
             LockClient c = on(redis).build()) {
            RedisClient admin = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
            try (StatefulRedisConnection<String, String> conn = admin.connect()) {
                RedisCommands<String, String> cmd = conn.sync();
                // small values: a large rejected one would leave room once its own buffer is freed
                String block = "x".repeat(1024);
                assertThatThrownBy(() -> {
                    for (int i = 0; i < 100_000; i++) {
                        cmd.set("filler:" + i, block);
                    }
                }).as("the server fills up").isInstanceOf(RedisException.class).hasMessageStartingWith("OOM");
                assertThatThrownBy(() -> c.lock("out-of-memory").acquire(Duration.ofSeconds(1)))
                        .isInstanceOf(NothingGrantedException.class)
                        .hasMessageContaining("out of memory").hasMessageContaining("nothing was granted")
                        .hasMessageNotContaining("unknown outcome");
            } finally {
                admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void anAcquireWhileDisconnectedSaysItWasNotSent() {
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS);
             LockClient c = on(redis).build()) {
            redis.stop();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThatThrownBy(() -> c.lock("disconnected").tryAcquire())
                            .isInstanceOf(NothingGrantedException.class)
                            .hasMessageContaining("was not sent").hasMessageNotContaining("unknown outcome"));
        }
    }
}
