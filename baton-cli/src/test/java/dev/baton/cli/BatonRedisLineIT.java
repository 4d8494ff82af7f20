package dev.baton.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.baton.Lease;
import dev.baton.redis.RedisLockClient;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.TestServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The line of waiters as operators see and clear it ({@code status}, {@code list}, {@code release --waiter}) on the
 * Redis that {@code scripts/start-servers.sh} starts, in process, under the default key prefix. A lock's line is the
 * sorted set {@code baton:{name}:q} (score: arrival in µs) and its places' expiries {@code baton:{name}:qx} (ms); a
 * test that needs a place that neither dies nor takes the lock (a waiter whose client is alive but stalled) writes
 * it there itself.
 */
class BatonRedisLineIT {
    static final String URL = BatonRedisIT.URL;
    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private RedisClient raw;
    private StatefulRedisConnection<String, String> connection;
    private RedisCommands<String, String> redis;

    @BeforeEach
    void connect() {
        TestServers.requireRedis();
        raw = RedisClient.create(URL);
        connection = raw.connect();
        redis = connection.sync();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : cleanup) {
            c.close();
        }
        connection.close();
        raw.shutdown();
    }

    private RedisLockClient client() {
        RedisLockClient c = RedisLocks.builder(RedisURI.create(URL)).leaseTime(Duration.ofSeconds(30)).build();
        cleanup.add(0, c);
        return c;
    }

    private static String lock(String what) {
        return "cli-redis-line-" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static String line(String name) {
        return "baton:{" + name + "}:q";
    }

    private static JsonNode entry(String json, String name) throws Exception {
        for (JsonNode n : new ObjectMapper().readTree(json)) {
            if (n.get("name").asText().equals(name)) {
                return n;
            }
        }
        throw new AssertionError("'" + name + "' not listed: " + json);
    }

    @Test
    void statusAndListShowTheHolderAndItsWaiterAndReleaseWaiterRemovesThePlace() throws Exception {
        RedisLockClient holder = client();
        RedisLockClient waiterClient = client();
        String name = lock("waiter");
        Lease held = holder.lock(name).tryAcquire().orElseThrow();
        CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
            try (Lease l = waiterClient.lock(name).acquire(Duration.ofSeconds(60))) {
                return l.fencingToken();
            }
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> redis.zcard(line(name)) == 1);
        String waiter = redis.zrange(line(name), 0, 0).get(0);
        assertThat(waiter).startsWith(waiterClient.clientId() + "#");

        BatonAdminIT.Result status = baton("status", name, "--url", URL);
        assertThat(status.status()).as(status.err()).isZero();
        List<String> lines = status.out().lines().toList();
        assertThat(lines).as(status.out()).hasSize(2);
        assertThat(lines.get(0)).contains("is held by " + held.holderId());
        assertThat(lines.get(1)).startsWith("  1. " + waiter + " waiting since 20").contains(", alive until 20");

        BatonAdminIT.Result text = baton("list", "--url", URL);
        assertThat(text.status()).as(text.err()).isZero();
        assertThat(text.out()).contains("  1. " + waiter + " waiting since ");

        BatonAdminIT.Result json = baton("list", "--json", "--url", URL);
        assertThat(json.status()).as(json.err()).isZero();
        JsonNode e = entry(json.out(), name);
        assertThat(e.get("state").asText()).isEqualTo("held");
        assertThat(e.get("keptFor").isNull()).isTrue();
        assertThat(e.get("line")).as(json.out()).hasSize(1);
        assertThat(e.get("line").get(0).get("owner").asText()).isEqualTo(waiter);
        assertThat(e.get("line").get(0).get("alive").asBoolean()).isTrue();

        BatonAdminIT.Result removed = baton("release", name, "--waiter", waiter, "--url", URL);
        assertThat(removed.status()).as(removed.err()).isZero();
        assertThat(removed.out()).startsWith("removed " + waiter + "'s place in the line of lock '" + name + "'");
        assertThat(held.isValid()).as("the holder is not touched").isTrue();

        // a live waiter keeps waiting: it takes a new place and gets the lock once the holder lets go
        held.close();
        assertThat(waiting.get(30, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
    }

    @Test
    void aFreeLockKeptForTheHeadOfItsLineSaysSoEverywhereAndReleaseWaiterFreesIt() throws Exception {
        RedisLockClient other = client();
        String name = lock("kept");
        String stalled = "stalled-host/2/def#7";
        List<String> time = redis.time();
        long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
        try {
            // alive (its client's heartbeat runs) for five minutes: the head of the line of a lock nobody holds
            redis.zadd(line(name), (nowMs - 10_000) * 1000.0, stalled);
            redis.zadd(line(name) + "x", nowMs + 300_000.0, stalled);
            assertThat(other.lock(name).tryAcquire()).as("a free lock kept for the head of its line").isEmpty();

            BatonAdminIT.Result status = baton("status", name, "--url", URL);
            assertThat(status.status()).as(status.out() + status.err()).isEqualTo(ExitCodes.KEPT_FOR_WAITER);
            List<String> lines = status.out().lines().toList();
            assertThat(lines).as(status.out()).hasSize(2);
            assertThat(lines.get(0)).startsWith("lock '" + name + "' is free, kept for the head of its line: "
                    + stalled + " (");
            assertThat(lines.get(1)).startsWith("  1. " + stalled + " waiting since 20").contains(", alive until 20");

            JsonNode e = entry(baton("list", "--json", "--url", URL).out(), name);
            assertThat(e.get("state").asText()).isEqualTo("kept");
            assertThat(e.get("strategy").asText()).isEqualTo("lease");
            assertThat(e.get("keptFor").asText()).isEqualTo(stalled);

            BatonAdminIT.Result run = baton("run", "--lock", name, "--wait", "0", "--url", URL, "--", "true");
            assertThat(run.status()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            assertThat(run.err()).contains("free, kept for the head of its line: " + stalled);

            BatonAdminIT.Result release = baton("release", name, "--url", URL);
            assertThat(release.status()).isEqualTo(ExitCodes.NOT_HELD);
            assertThat(release.err()).contains("is free, kept for the head of its line: " + stalled)
                    .contains("nothing released").contains("--waiter " + stalled);

            BatonAdminIT.Result removed = baton("release", name, "--waiter", stalled, "--url", URL);
            assertThat(removed.status()).as(removed.err()).isZero();
            assertThat(removed.out()).startsWith("removed " + stalled + "'s place in the line of lock '" + name
                    + "' (waiting since 20").contains("alive until 20");
            BatonAdminIT.Result again = baton("release", name, "--waiter", stalled, "--url", URL);
            assertThat(again.status()).isEqualTo(ExitCodes.NOT_HELD);
            assertThat(again.err()).contains(stalled + " has no place in the line of lock '" + name
                    + "' (nobody waits): nothing removed");

            assertThat(baton("status", name, "--url", URL).status()).isEqualTo(ExitCodes.NOT_HELD);
            assertThat(other.lock(name).tryAcquire()).as("the place removed, the lock is free for anyone")
                    .isPresent().get().satisfies(Lease::close);
        } finally {
            redis.del(line(name), line(name) + "x");
        }
    }
}
