package dev.baton.micrometer;

import dev.baton.LockClient;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.TestServers;
import dev.baton.zookeeper.ZooKeeperLocks;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The observer set on the Redis and ZooKeeper builders reaches their clients (the ZooKeeper builder rebuilds its
 * settings from the negotiated session timeout), and each backend has its tag.
 */
class EveryBackendObservedIT {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final BatonMetrics metrics = BatonMetrics.builder(registry).build();

    private void grantedOnce(LockClient client, String backend) {
        try (client) {
            client.lock("metrics-" + backend).acquire(Duration.ofSeconds(5)).close();
        }
        assertThat(registry.get(BatonMetrics.ACQUIRE).tags("backend", backend, "lock", "metrics-" + backend,
                "outcome", "granted").timer().count()).isEqualTo(1);
        assertThat(registry.get(BatonMetrics.LEASE_DURATION).tags("backend", backend).timer().count()).isEqualTo(1);
    }

    @Test
    void redis() {
        TestServers.requireRedis();
        grantedOnce(RedisLocks.builder("redis://127.0.0.1:6379").keyPrefix("baton-metrics-it:").observer(metrics)
                .build(), "redis");
    }

    @Test
    void zooKeeper() {
        TestServers.requireZooKeeper();
        grantedOnce(ZooKeeperLocks.builder("127.0.0.1:2181").rootPath("/baton-metrics-it").observer(metrics).build(),
                "zookeeper");
    }
}
