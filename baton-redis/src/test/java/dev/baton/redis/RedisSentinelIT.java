package dev.baton.redis;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.testkit.HaServers;
import dev.baton.testkit.OwnServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Redis behind Sentinel: the Sentinel deployment of {@code scripts/start-servers.sh --ha} (left running for reuse;
 * this class fails nothing over), and a primary with a replica of the test's own for a promotion.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedisSentinelIT {

    @Test
    void aSentinelUrlLocksOnThePrimaryWithReplicaAcknowledgementAndWakesWaitersByPubSub() throws Exception {
        String url = HaServers.url(HaServers.REDIS_SENTINEL);
        assertThat(url).startsWith("redis-sentinel://").contains("requireReplicas=1");
        String name = "sentinel-it-" + UUID.randomUUID();
        try (LockClient a = RedisLocks.builder(url).leaseTime(Duration.ofSeconds(30)).build();
             LockClient b = RedisLocks.builder(url).leaseTime(Duration.ofSeconds(30)).build()) {
            assertThat(a.lock(name).toString()).contains("primary 'baton' of the Sentinels 127.0.0.1:26390");
            Lease first = a.lock(name).acquire(Duration.ofSeconds(5));
            // the grant is on the primary and, acknowledged by WAIT 1, on the replica
            for (int port : List.of(6390, 6391)) {
                try (RedisClient c = RedisClient.create(RedisURI.create("127.0.0.1", port));
                     StatefulRedisConnection<String, String> conn = c.connect()) {
                    assertThat(conn.sync().exists(RedisKeys.Lock.of(RedisKeys.DEFAULT_PREFIX, name).exclusive())).as("port " + port)
                            .isEqualTo(1L);
                }
            }
            CompletableFuture<Lease> second = CompletableFuture.supplyAsync(() -> b.lock(name).acquire(Duration.ofSeconds(20)));
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !second.isDone());
            long released = System.nanoTime();
            first.close();
            Lease next = second.get(20, TimeUnit.SECONDS);
            // woken by the release's message on the primary, not by the 30 s lease running out
            assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(15));
            assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
            next.close();
        }
    }

    /**
     * What a Sentinel failover does to a lock's keys, without waiting for Sentinel: a replica that has every grant
     * is promoted ({@code REPLICAOF NO ONE}, the command Sentinel sends) while clients still reach the old primary.
     * Both primaries then hold the same token counter; each grants the lock to a client of its own.
     */
    @Test
    void aPromotedReplicaAndItsOldPrimaryNeverGrantTheSameToken() {
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS);
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--replicaof", "127.0.0.1",
                     Integer.toString(primary.port()));
             RedisClient admin = RedisClient.create(RedisURI.create(replica.host(), replica.port()));
             StatefulRedisConnection<String, String> replicaConn = admin.connect()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> replicaConn.sync().info("replication")
                    .contains("master_link_status:up"));
            String name = "promoted";
            long before;
            try (LockClient old = RedisLocks.builder(RedisURI.create(primary.host(), primary.port()))
                    .requireReplicas(1, Duration.ofSeconds(2)).build();
                 Lease l = old.lock(name).acquire(Duration.ofSeconds(5))) {
                before = l.fencingToken();
            }
            replicaConn.sync().replicaofNoOne();
            // two clients that never saw each other's tokens, one on each primary
            try (LockClient onOld = RedisLocks.builder(RedisURI.create(primary.host(), primary.port())).build();
                 LockClient onNew = RedisLocks.builder(RedisURI.create(replica.host(), replica.port())).build();
                 Lease a = onOld.lock(name).acquire(Duration.ofSeconds(5));
                 Lease b = onNew.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(a.fencingToken()).as("the old primary's grant after the promotion").isGreaterThan(before);
                assertThat(b.fencingToken()).as("the new primary's grant after the promotion").isGreaterThan(before);
                assertThat(b.fencingToken()).as("two primaries, one lock: the two grants' tokens")
                        .isNotEqualTo(a.fencingToken());
            }
        }
    }

    /**
     * The positive control of the failover checks: without {@code WAIT}, a primary that has just lost its role (its
     * replica was promoted, it was not yet told) still grants, and the promoted replica grants the same lock: two
     * holders at once, each with a valid lease. Only the fencing token (different, above every earlier one) protects
     * the resource.
     */
    @Test
    void withoutWaitTheOldAndTheNewPrimaryBothGrantOneLock() {
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS);
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--replicaof", "127.0.0.1",
                     Integer.toString(primary.port()));
             RedisClient admin = RedisClient.create(RedisURI.create(replica.host(), replica.port()));
             StatefulRedisConnection<String, String> replicaConn = admin.connect()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> replicaConn.sync().info("replication")
                    .contains("master_link_status:up"));
            try (LockClient onOld = RedisLocks.builder(RedisURI.create(primary.host(), primary.port()))
                    .leaseTime(Duration.ofSeconds(30)).build();
                 LockClient onNew = RedisLocks.builder(RedisURI.create(replica.host(), replica.port()))
                         .leaseTime(Duration.ofSeconds(30)).build()) {
                replicaConn.sync().replicaofNoOne();
                Lease a = onOld.lock("split").acquire(Duration.ofSeconds(5));
                Lease b = onNew.lock("split").acquire(Duration.ofSeconds(5));
                assertThat(a.isValid() && b.isValid()).as("two holders of one lock at once").isTrue();
                assertThat(a.fencingToken()).isNotEqualTo(b.fencingToken());
                a.close();
                b.close();
            }
        }
    }

    /** The same split with {@code requireReplicas(1)}: the old primary's grant has no replica and is refused. */
    @Test
    void withWaitTheOldPrimaryRefusesAGrantNoReplicaAcknowledged() {
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS);
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--replicaof", "127.0.0.1",
                     Integer.toString(primary.port()));
             RedisClient admin = RedisClient.create(RedisURI.create(replica.host(), replica.port()));
             StatefulRedisConnection<String, String> replicaConn = admin.connect()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> replicaConn.sync().info("replication")
                    .contains("master_link_status:up"));
            try (RedisClient primaryAdmin = RedisClient.create(RedisURI.create(primary.host(), primary.port()));
                 StatefulRedisConnection<String, String> primaryConn = primaryAdmin.connect()) {
                // the primary counts a replica for WAIT once it is online on its side, not when the replica's link is up
                await().atMost(Duration.ofSeconds(30)).until(() -> primaryConn.sync().info("replication")
                        .contains("state=online"));
            }
            try (LockClient onOld = RedisLocks.builder("redis://127.0.0.1:" + primary.port()
                    + "?requireReplicas=1&replicaTimeout=2s").leaseTime(Duration.ofSeconds(30)).build();
                 LockClient onNew = RedisLocks.builder(RedisURI.create(replica.host(), replica.port()))
                         .leaseTime(Duration.ofSeconds(30)).build()) {
                try (Lease before = onOld.lock("split").acquire(Duration.ofSeconds(5))) {
                    assertThat(before.isValid()).as("acknowledged by the replica before the promotion").isTrue();
                }
                replicaConn.sync().replicaofNoOne();
                assertThatThrownBy(() -> onOld.lock("split").acquire(Duration.ofSeconds(5)))
                        .isInstanceOf(dev.baton.LockBackendException.class).hasMessageContaining("replica");
                try (Lease b = onNew.lock("split").acquire(Duration.ofSeconds(5))) {
                    assertThat(b.isValid()).as("the new primary's grant, the only holder").isTrue();
                }
            }
        }
    }
}
