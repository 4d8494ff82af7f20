package dev.baton.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.baton.Lease;
import dev.baton.LockLostException;
import dev.baton.redis.RedisLockClient;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.TestServers;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton run|list|status|release --url redis://…} against the Redis that {@code scripts/start-servers.sh}
 * starts, in process, while a lock client of the library holds locks under the same (default) key prefix.
 */
class BatonRedisIT {
    static final String URL = "redis://" + TestServers.REDIS_HOST + ":" + TestServers.REDIS_PORT;
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @BeforeEach
    void redisIsUp() {
        TestServers.requireRedis();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : cleanup) {
            c.close();
        }
    }

    private RedisLockClient client(Duration lease) {
        RedisLockClient c = RedisLocks.builder(RedisURI.create(URL)).leaseTime(lease).build();
        cleanup.add(c);
        return c;
    }

    private static String lock(String what) {
        return "cli-redis-" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void runHoldsTheLockWhileTheCommandRunsAndGivesItsTokenToTheCommand(@TempDir Path dir) throws Exception {
        String name = lock("run");
        RedisLockClient other = client(Duration.ofSeconds(30));
        Path seen = dir.resolve("seen");
        // the command's output is the process's own (inherited), so it writes what it saw to a file
        BatonAdminIT.Result r = baton("run", "--url", URL, "--lock", name, "--", "sh", "-c",
                "echo \"$BATON_LOCK $BATON_FENCING_TOKEN\" > " + seen);
        assertThat(r.status()).as(r.err()).isZero();
        String[] lockAndToken = Files.readString(seen).strip().split(" ");
        assertThat(lockAndToken[0]).isEqualTo(name);
        long token = Long.parseLong(lockAndToken[1]);
        try (Lease next = other.lock(name).tryAcquire().orElseThrow()) {
            assertThat(next.fencingToken()).as("released at the end, next token higher").isGreaterThan(token);
            BatonAdminIT.Result busy = baton("run", "--url", URL, "--lock", name, "--wait", "0", "--", "true");
            assertThat(busy.status()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            assertThat(busy.err()).contains(next.holderId());
        }
    }

    @Test
    void listAndStatusShowAHeldLockWithHolderAndToken() throws Exception {
        String name = lock("list");
        try (Lease held = client(Duration.ofSeconds(30)).lock(name).tryAcquire().orElseThrow()) {
            BatonAdminIT.Result list = baton("list", "--url", URL, "--json");
            assertThat(list.status()).as(list.err()).isZero();
            JsonNode entry = null;
            for (JsonNode n : new ObjectMapper().readTree(list.out())) {
                if (n.get("name").asText().equals(name)) {
                    entry = n;
                }
            }
            assertThat(entry).as("listed: " + list.out()).isNotNull();
            assertThat(entry.get("state").asText()).isEqualTo("held");
            assertThat(entry.get("strategy").asText()).isEqualTo("lease");
            assertThat(entry.get("holder").asText()).isEqualTo(held.holderId());
            assertThat(entry.get("token").asLong()).isEqualTo(held.fencingToken());

            BatonAdminIT.Result status = baton("status", name, "--url", URL);
            assertThat(status.status()).as(status.err()).isZero();
            assertThat(status.out()).contains(held.holderId()).contains("token " + held.fencingToken());
        }
        assertThat(baton("status", name, "--url", URL).status()).isEqualTo(ExitCodes.NOT_HELD);
    }

    @Test
    void releaseWithTheTokenEndsThatGrantAndItsHolderLosesIt() throws Exception {
        RedisLockClient holder = client(Duration.ofSeconds(3));
        RedisLockClient other = client(Duration.ofSeconds(30));
        String name = lock("release");
        Lease held = holder.lock(name).tryAcquire().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        held.onLost(lost::complete);

        BatonAdminIT.Result wrong = baton("release", name, "--url", URL, "--token",
                Long.toString(held.fencingToken() + 1000));
        assertThat(wrong.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(wrong.err()).contains("held under token " + held.fencingToken() + ", not "
                + (held.fencingToken() + 1000) + ": nothing released");
        assertThat(other.lock(name).tryAcquire()).as("a wrong token releases nothing").isEmpty();

        BatonAdminIT.Result r = baton("release", name, "--url", URL, "--token", Long.toString(held.fencingToken()));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("released lock '" + name + "': holder " + held.holderId() + ", token "
                + held.fencingToken());

        try (Lease next = other.lock(name).tryAcquire().orElseThrow()) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(lost.get(20, TimeUnit.SECONDS).getMessage()).contains(name);
            assertThat(held.isValid()).isFalse();
            held.close(); // the stale holder's release cannot touch its successor's grant
            BatonAdminIT.Result again = baton("release", name, "--url", URL, "--token",
                    Long.toString(held.fencingToken()));
            assertThat(again.status()).isEqualTo(ExitCodes.NOT_HELD);
            next.checkValid();
        }
        BatonAdminIT.Result none = baton("release", name, "--url", URL);
        assertThat(none.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(none.err()).contains("is free").contains("nothing released");
    }

    @Test
    void releaseWithoutTokenEndsWhicheverGrantIsLive() {
        String name = lock("release-any");
        Lease held = client(Duration.ofSeconds(30)).lock(name).tryAcquire().orElseThrow();
        BatonAdminIT.Result r = baton("release", name, "--url", URL);
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("token " + held.fencingToken());
        assertThat(baton("status", name, "--url", URL).status()).isEqualTo(ExitCodes.NOT_HELD);
    }

    @Test
    void whatRedisHasNoneOfIsAUsageErrorAndAnUnreachableServerIs69() {
        BatonAdminIT.Result table = baton("run", "--url", URL, "--table", "t", "--lock", "x", "--", "true");
        assertThat(table.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(table.err()).contains("--table").contains("key prefix baton:");
        BatonAdminIT.Result session = baton("run", "--url", URL, "--strategy", "session", "--lock", "x", "--", "true");
        assertThat(session.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(session.err()).contains("--strategy session needs PostgreSQL or MariaDB/MySQL");
        BatonAdminIT.Result purge = baton("purge", "--url", URL, "--older-than", "1h");
        assertThat(purge.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(purge.err()).contains("nothing to purge on redis://").contains("expires with its lease");
        BatonAdminIT.Result down = baton("list", "--url", "redis://:s3cret@127.0.0.1:1");
        assertThat(down.status()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(down.err()).contains("cannot reach redis://:***@127.0.0.1:1").doesNotContain("s3cret");
    }
}
