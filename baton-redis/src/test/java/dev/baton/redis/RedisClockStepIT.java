package dev.baton.redis;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.testkit.OwnServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandSucceededEvent;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis server whose clock steps forward ends every grant early: {@code PX} expiries are times on the server's
 * clock, so a step of S brings each key's end S closer. A test cannot step an own server's clock, but it can do to
 * one key exactly what the step does to all of them: shorten its expiry from an admin connection ({@code PEXPIRE}).
 * The holder must be told (onLost, {@code isValid()} false) at its next renewal, one renewal interval, not at its
 * local deadline or never. Lease 10 s, renewal every second: the bound is 1 s plus a round trip; the tests that time
 * the loss allow 3 s, far inside the 9.9 s of local validity.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClockStepIT {
    private static final String PREFIX = "step:";
    private static final Duration LEASE = Duration.ofSeconds(10);
    private static final Duration RENEW = Duration.ofSeconds(1);
    private static final Duration BOUND = RENEW.plusSeconds(2);

    private OwnServer redis;
    private RedisClient admin;
    private StatefulRedisConnection<String, String> adminConnection;

    @BeforeEach
    void start() {
        redis = OwnServer.start(OwnServer.Engine.REDIS);
        admin = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        adminConnection = admin.connect();
    }

    @AfterEach
    void stop() {
        adminConnection.close();
        admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        redis.close();
    }

    private LockClient client() {
        return RedisLocks.builder(RedisURI.create(redis.host(), redis.port())).keyPrefix(PREFIX)
                .commandTimeout(Duration.ofSeconds(2)).leaseTime(LEASE).renewInterval(RENEW).build();
    }

    private RedisCommands<String, String> admin() {
        return adminConnection.sync();
    }

    private static String key(String name) {
        return RedisKeys.Lock.of(PREFIX, name).exclusive();
    }

    /** A step smaller than the grant's time left: the key survives until the next renewal, which renews it. */
    @Test
    void aRenewalThatFindsTheGrantEndingBeforeItsLocalDeadlineLosesTheLease() {
        try (LockClient a = client(); Lease lease = a.lock("stepped").acquire(Duration.ofSeconds(1))) {
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            // what a 4 s step forward does to the grant: it ends 4 s sooner by the server's clock (6 s from now,
            // longer than a renewal interval, so the next renewal still finds it and extends it)
            assertThat(admin().pexpire(key("stepped"), 6_000)).isTrue();
            long stepped = System.nanoTime();
            await().atMost(BOUND).untilAsserted(() -> assertThat(lease.isValid())
                    .as("isValid() %d ms after the step (local deadline %d ms after the grant)",
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stepped), LEASE.toMillis())
                    .isFalse());
            long told = System.nanoTime() - stepped;
            assertThat(lost).isCompleted();
            assertThat(lost.join().getMessage()).contains("lease on 'stepped'").contains("left on the grant")
                    .contains("the server's clock jumped forward");
            System.out.printf("stepped 4 s (key cut to 6 s): holder told lost %d ms after the step%n",
                    TimeUnit.NANOSECONDS.toMillis(told));
        }
    }

    /**
     * A lease lost to the time-left check was renewed by that very renewal: the server would keep the grant for a
     * whole lease, held by nobody (its holder was told it is lost). The client clears it on the server at once, with
     * the holder's owner-checked release, so another client can take the lock.
     *
     * <p>How the key ended is read from its keyspace events, not from the time it took: deleted (the clearing, while
     * the lost lease is still open, so nobody else deleted it) and not expired (left to run out the lease the renewal
     * gave it, the bug). So a slow machine only makes the test slower: it waits for the key's end up to three leases.
     */
    @Test
    void aLeaseLostToTheTimeLeftCheckIsClearedOnTheServer() throws Exception {
        assertThat(admin().configSet("notify-keyspace-events", "Kgx")).isEqualTo("OK"); // g: del; x: expired
        BlockingQueue<String> ends = new LinkedBlockingQueue<>();
        try (StatefulRedisPubSubConnection<String, String> events = admin.connectPubSub()) {
            events.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    if (message.equals("del") || message.equals("expired")) {
                        ends.add(message);
                    }
                }
            });
            events.sync().subscribe("__keyspace@0__:" + key("cleared"));
            try (LockClient a = client(); LockClient b = client();
                 Lease lease = a.lock("cleared").acquire(Duration.ofSeconds(1))) {
                CompletableFuture<LockLostException> lost = new CompletableFuture<>();
                lease.onLost(lost::complete);
                assertThat(admin().pexpire(key("cleared"), 6_000)).isTrue();
                // lost to the time-left check of a renewal before the cut key ends (six renewal intervals), not
                // by its deadline: the cause is asserted, the wait only bounded by the lease
                await().atMost(LEASE).until(lost::isDone);
                assertThat(lost.join().getMessage()).contains("left on the grant");
                long told = System.nanoTime();
                String end = ends.poll(LEASE.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(end).as("how the lost grant's key ended, %d ms after the loss (null: not yet)",
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - told)).isEqualTo("del");
                assertThat(admin().exists(key("cleared"))).isZero();
                try (Lease next = b.lock("cleared").tryAcquire().orElseThrow()) {
                    assertThat(next.isValid()).isTrue();
                }
            }
        }
    }

    /**
     * The clearing is owner-checked: a stale clear never ends another holder's grant. The clears are sent in the
     * background, so the test first waits until the server has answered both (a command listener on the stale
     * backend's own client sees their replies: the scripts have run), then reads the key: an assertion made before
     * the clears ran would pass whatever they do.
     */
    @Test
    void clearingALostGrantNeverEndsAnotherHoldersGrant() {
        BlockingQueue<String> answered = new LinkedBlockingQueue<>();
        try (LockClient b = client(); Lease held = b.lock("other").acquire(Duration.ofSeconds(1));
             RedisClient raw = RedisClient.create(RedisURI.create(redis.host(), redis.port()))) {
            raw.addListener(new CommandListener() {
                @Override
                public void commandSucceeded(CommandSucceededEvent event) {
                    String type = event.getCommand().getType().toString();
                    if (type.equals("EVALSHA") || type.equals("EVAL")) {
                        answered.add(event.getCommand().getArgs().toCommandString());
                    }
                }
            });
            String grant = admin().get(key("other"));
            RedisLockBackend stale = new RedisLockBackend(raw, false, PREFIX, Duration.ofSeconds(2), "test", 0,
                    Duration.ofSeconds(1), Duration.ofDays(1));
            try {
                // another owner with the holder's token; the holder itself with an older token
                stale.lost(new dev.baton.spi.LeaseKey("other", "someone-else#1", held.fencingToken()));
                stale.lost(new dev.baton.spi.LeaseKey("other", held.holderId(), held.fencingToken() - 1));
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(answered)
                        .as("the clears the server has answered").hasSize(2)
                        .anyMatch(args -> args.contains("someone-else#1"))
                        .anyMatch(args -> args.contains(held.holderId())));
                assertThat(admin().get(key("other"))).as("the holder's grant after both clears ran").isEqualTo(grant);
                assertThat(held.isValid()).isTrue();
                held.checkValid();
            } finally {
                stale.close();
            }
        }
    }

    /** A step larger than the grant's time left: the key is gone at once and a waiter takes the lock. */
    @Test
    void aGrantTheServerEndedEarlyIsLostAtTheNextRenewalWhileTheNextHolderHasIt() throws Exception {
        try (LockClient a = client(); LockClient b = client();
             Lease first = a.lock("expired").acquire(Duration.ofSeconds(1))) {
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            first.onLost(lost::complete);
            CompletableFuture<Lease> second = CompletableFuture.supplyAsync(
                    () -> b.lock("expired").acquire(Duration.ofSeconds(30)));
            // the waiter keeps its place in line before the step
            await().atMost(Duration.ofSeconds(10)).until(() -> admin().zcard(RedisKeys.Lock.of(PREFIX, "expired")
                    .line()) == 1);
            assertThat(admin().pexpire(key("expired"), 1)).isTrue(); // a step of more than the lease
            long stepped = System.nanoTime();
            try (Lease next = second.get(10, TimeUnit.SECONDS)) {
                long granted = System.nanoTime();
                await().atMost(BOUND).untilAsserted(() -> assertThat(first.isValid())
                        .as("the first holder's isValid() %d ms after the step",
                                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stepped)).isFalse());
                long told = System.nanoTime();
                assertThat(lost).isCompleted();
                assertThat(next.isValid()).isTrue();
                System.out.printf("stepped past the lease: second holder granted %d ms after the step, first holder"
                                + " told lost %d ms after the step (two holders for %d ms)%n",
                        TimeUnit.NANOSECONDS.toMillis(granted - stepped), TimeUnit.NANOSECONDS.toMillis(told - stepped),
                        TimeUnit.NANOSECONDS.toMillis(Math.max(0, told - granted)));
            }
        }
    }
}
