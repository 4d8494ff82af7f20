package dev.baton.cli;

import dev.baton.Lease;
import dev.baton.redis.RedisLockClient;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.OwnServer;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code baton run --wait} across a restart of the Redis it waits on (a Redis of the test's own, without
 * persistence: the restart forgets the holder's grant). An attempt that failed because the connection was down
 * granted nothing, so the wait goes on until {@code --wait} and takes the lock once Redis is back, instead of exiting
 * 69 ("unreachable") a few seconds into the outage.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BatonRedisRestartIT {

    @Test
    void aWaitingRunGetsTheLockAfterATwoSecondRedisRestartInsteadOfExiting69() throws Exception {
        long t0 = System.nanoTime();
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS);
             RedisLockClient holder = RedisLocks.builder(RedisURI.create(redis.url()))
                     .leaseTime(Duration.ofSeconds(30)).build()) {
            String name = "cli-redis-restart-" + UUID.randomUUID().toString().substring(0, 8);
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<BatonAdminIT.Result> waiter = CompletableFuture.supplyAsync(() -> baton("run", "--url",
                    redis.url(), "--lock", name, "--wait", "60s", "--", "true"));
            await().atMost(Duration.ofSeconds(20)).until(() -> holder.list().stream()
                    .anyMatch(l -> l.name().equals(name) && !l.line().isEmpty()));
            long inLine = System.nanoTime();
            redis.stop();
            Thread.sleep(2000); // the outage: two seconds
            redis.start();
            long back = System.nanoTime();
            BatonAdminIT.Result r = waiter.get(60, TimeUnit.SECONDS);
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
            assertThat(r.status()).as("stderr: %s", r.err()).isZero();
            System.out.printf("baton run --wait 60s across a 2 s Redis restart: got the lock, ran and exited %d ms"
                    + " after the server was back (setup until the waiter was in line: %d ms)%n", took,
                    TimeUnit.NANOSECONDS.toMillis(inLine - t0));
            held.close();
        }
    }
}
