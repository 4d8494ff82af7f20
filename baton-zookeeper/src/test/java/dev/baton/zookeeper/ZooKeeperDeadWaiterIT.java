package dev.baton.zookeeper;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.WaiterProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a waiter killed in line ({@code kill -9}) costs on ZooKeeper: its member node is ephemeral and lives until the
 * server expires its session, and the live waiter behind it watches only that node, so a lock released meanwhile
 * reaches the live waiter when the dead one's session expires: one session timeout after the kill (the server's
 * expiry runs on tick boundaries), not at the release.
 */
class ZooKeeperDeadWaiterIT {
    private final ZooKeeperFixture fixture = new ZooKeeperFixture();

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    private int members(String name) throws Exception {
        String parent = fixture.root() + "/" + ZooKeeperNames.encode(name);
        return fixture.admin().checkExists().forPath(parent) == null ? 0
                : fixture.admin().getChildren().forPath(parent).size();
    }

    @Test
    void aLockReleasedBehindADeadWaiterReachesTheNextWaiterWhenTheDeadWaitersSessionExpires() throws Exception {
        String name = "dead-waiter-" + UUID.randomUUID();
        Duration session = Duration.ofSeconds(4);
        try (LockClient holder = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)));
             LockClient live = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)))) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            try (WaiterProcess dead = WaiterProcess.start(ZooKeeperFixture.class, name, session)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> members(name) == 2);
                CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
                    try (Lease l = live.lock(name).acquire(Duration.ofSeconds(60))) {
                        return System.nanoTime();
                    }
                });
                await().atMost(Duration.ofSeconds(5)).until(() -> members(name) == 3);
                long killed = System.nanoTime();
                dead.kill();
                held.close();
                long released = System.nanoTime();
                long granted = waiting.get(60, TimeUnit.SECONDS);
                long afterRelease = TimeUnit.NANOSECONDS.toMillis(granted - released);
                long afterKill = TimeUnit.NANOSECONDS.toMillis(granted - killed);
                System.out.printf("[zookeeper] released behind a dead waiter (session timeout %d ms): the live waiter"
                        + " got the lock %d ms after the release, %d ms after the kill%n", session.toMillis(),
                        afterRelease, afterKill);
                assertThat(afterKill).as("the dead waiter's node lives until its session expires")
                        .isGreaterThanOrEqualTo(session.toMillis() / 2);
                assertThat(afterKill).isLessThan(session.toMillis() + 10_000);
            }
        }
    }
}
