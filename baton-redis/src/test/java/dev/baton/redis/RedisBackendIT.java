package dev.baton.redis;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.OwnServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What the contract ladder does not cover: the Lettuce traps, the fair line, the token seed across a restart. On a
 * Redis of the class's own ({@link OwnServer}): its tests restart it, pause it and flush its scripts.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisBackendIT {
    private OwnServer redis;
    private RedisFixture fixture;

    @BeforeAll
    void open() {
        redis = OwnServer.start(OwnServer.Engine.REDIS);
        fixture = new RedisFixture(redis.host(), redis.port());
    }

    @AfterAll
    void close() {
        try {
            fixture.close();
        } finally {
            redis.close();
        }
    }

    private static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    private LockClient direct(Duration lease, Duration poll) {
        return RedisLocks.builder(RedisURI.create(redis.host(), redis.port()))
                .keyPrefix(RedisFixture.PREFIX).leaseTime(lease).minPollInterval(poll).maxPollInterval(poll).build();
    }

    @Test
    void keyPrefixIsValidatedWithAClearMessage() {
        RedisLocks.Builder b = RedisLocks.builder(RedisURI.create("redis://127.0.0.1:6379"));
        assertThatThrownBy(() -> b.keyPrefix("locks{x}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyPrefix 'locks{x}'").hasMessageContaining("no braces");
        assertThatThrownBy(() -> b.keyPrefix("a b")).hasMessageContaining("not allowed");
        assertThatThrownBy(() -> b.keyPrefix("locks*")).hasMessageContaining("glob");
        assertThatThrownBy(() -> b.keyPrefix("")).hasMessageContaining("keyPrefix must not be null or empty");
        assertThatThrownBy(() -> b.keyPrefix(null)).hasMessageContaining("keyPrefix must not be null or empty");
        assertThatThrownBy(() -> b.keyPrefix("p".repeat(65))).hasMessageContaining("at most 64");
        assertThatThrownBy(() -> b.commandTimeout(Duration.ZERO)).hasMessageContaining("commandTimeout");
        assertThatThrownBy(() -> RedisLocks.builder((RedisURI) null)).hasMessageContaining("redisURI");
        assertThatThrownBy(() -> RedisLocks.builder((RedisClient) null)).hasMessageContaining("redisClient");
        assertThat(b.keyPrefix("app-1:locks.v2_")).isSameAs(b);
    }

    @Test
    void aGrantTooFewReplicasAcknowledgedIsGivenBackAndTheAcquireFails() {
        String name = unique("replicas");
        // the tests' Redis has no replica: WAIT 1 answers 0 after its timeout
        try (LockClient a = RedisLocks.builder(RedisURI.create(redis.host(), redis.port()))
                .keyPrefix(RedisFixture.PREFIX).requireReplicas(1, Duration.ofMillis(50)).build();
             LockClient b = fixture.newClient(ClientConfig.defaults())) {
            assertThatThrownBy(() -> a.lock(name).acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("only 0 of the 1 required replica(s) acknowledged")
                    .hasMessageContaining("given back");
            assertThat(b.lock(name).tryAcquire()).as("the grant was given back").isPresent().get()
                    .satisfies(Lease::close);
        }
        RedisLocks.Builder b = RedisLocks.builder(RedisURI.create("redis://127.0.0.1:6379"));
        assertThatThrownBy(() -> b.requireReplicas(-1, Duration.ofMillis(50))).hasMessageContaining("replicas");
        assertThatThrownBy(() -> b.requireReplicas(1, Duration.ofSeconds(11))).hasMessageContaining("replica timeout");
        assertThatThrownBy(() -> b.requireReplicas(1, Duration.ofSeconds(6)).build())
                .hasMessageContaining("shorter than commandTimeout");
    }

    @Test
    void anUnreachableRedisFailsTheBuildNamingIt() {
        assertThatThrownBy(() -> RedisLocks.builder(RedisURI.create("redis://127.0.0.1:1")).build())
                .isInstanceOf(LockBackendException.class).hasMessageContaining("127.0.0.1:1")
                .hasMessageContaining("cannot connect");
    }

    @Test
    void anAcquireAfterScriptFlushFallsBackToEvalAndReloads() {
        String name = unique("noscript");
        try (LockClient a = fixture.newClient(ClientConfig.defaults())) {
            long first;
            try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                first = l.fencingToken();
            }
            fixture.admin().scriptFlush();
            assertThat(fixture.admin().scriptExists(Scripts.ACQUIRE.sha())).containsExactly(false);
            try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(l.fencingToken()).isGreaterThan(first);
            }
            assertThat(fixture.admin().scriptExists(Scripts.ACQUIRE.sha(), Scripts.RELEASE.sha()))
                    .as("EVAL cached the scripts again").containsExactly(true, true);
        }
    }

    @Test
    void aFreeLockGoesToTheLongestWaiterNotBackToTheReleasingThread() throws Exception {
        String name = unique("fair");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        // long poll caps: each hand-over is the release's message reaching the head of the line's client
        ClientConfig patient = new ClientConfig(Duration.ofSeconds(5), Duration.ofSeconds(30));
        try (LockClient h = fixture.newClient(ClientConfig.defaults());
             LockClient x = fixture.newClient(patient);
             LockClient y = fixture.newClient(patient)) {
            Lease held = h.lock(name).acquire(Duration.ofSeconds(5));
            List<String> order = new CopyOnWriteArrayList<>();
            CountDownLatch done = new CountDownLatch(2);
            Thread first = waiter(x, name, "x", order, done);
            await().atMost(Duration.ofSeconds(5)).until(() -> fixture.admin().zcard(keys.line()) == 1);
            Thread second = waiter(y, name, "y", order, done);
            await().atMost(Duration.ofSeconds(5)).until(() -> fixture.admin().zcard(keys.line()) == 2);
            held.close();
            assertThat(h.lock(name).tryAcquire()).as("the releasing thread, while two wait").isEmpty();
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            first.join();
            second.join();
            assertThat(order).containsExactly("x", "y");
            assertThat(fixture.admin().exists(keys.line())).as("the line is gone when nobody waits").isZero();
        }
    }

    private static Thread waiter(LockClient c, String name, String label, List<String> order, CountDownLatch done) {
        Thread t = new Thread(() -> {
            try (Lease l = c.lock(name).acquire(Duration.ofSeconds(20))) {
                order.add(label);
            } finally {
                done.countDown();
            }
        });
        t.start();
        return t;
    }

    @Test
    void aWaiterThatGivesUpLeavesTheLine() {
        String name = unique("withdraw");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = fixture.newClient(ClientConfig.defaults()); LockClient b = fixture.newClient(ClientConfig.defaults())) {
            try (Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThatThrownBy(() -> b.lock(name).acquire(Duration.ofMillis(300)))
                        .isInstanceOf(dev.baton.LockTimeoutException.class);
                assertThat(fixture.admin().zcard(keys.line())).isZero();
            }
        }
    }

    @Test
    void anAcquireWithAnUnknownOutcomeIsUndoneByAnOwnerCheckedDelete() throws Exception {
        String name = unique("unknown");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)));
             LockClient b = fixture.newClient(ClientConfig.defaults())) {
            AutoCloseable cut = fixture.cutOff(a);
            // the script waits in the cut network path; the command times out (2 s) with an unknown outcome
            assertThatThrownBy(() -> a.lock(name).acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockBackendException.class).hasMessageContaining("unknown outcome");
            assertThat(fixture.admin().exists(keys.counter())).as("nothing reached the server yet").isZero();
            cut.close();
            // the late script runs (it creates the counter and grants), then the owner-checked delete after it
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.admin().exists(keys.counter()) == 1);
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.admin().exists(keys.exclusive()) == 0);
            try (Lease l = b.lock(name).tryAcquire().orElseThrow(
                    () -> new AssertionError("the late grant was not undone: held for its 30 s lease"))) {
                assertThat(l.isValid()).isTrue();
            }
        }
    }

    /**
     * {@code lock(name)} and {@code readWriteLock(name)} are two locks: the clean-up after a plain acquire with an
     * unknown outcome deletes only the plain lock's grant, never the same thread's read grant of the read-write
     * lock (its owner id is the same: the client and the thread).
     */
    @Test
    void aTimedOutPlainAcquireKeepsTheSameThreadsReadGrant() throws Exception {
        String name = unique("abandon-ns");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(30)));
             LockClient b = fixture.newClient(ClientConfig.defaults());
             Lease read = a.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5))) {
            AutoCloseable cut = fixture.cutOff(a);
            assertThatThrownBy(() -> a.lock(name).acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockBackendException.class).hasMessageContaining("unknown outcome");
            cut.close();
            // the late plain grant, then its owner-checked clean-up, then (same connection, in order) this probe
            String probe = unique("probe");
            await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                    .until(() -> a.lock(probe).tryAcquire().map(l -> { l.close(); return true; }).orElse(false));
            assertThat(fixture.admin().exists(keys.exclusive())).as("the late plain grant was cleaned up").isZero();
            assertThat(fixture.admin().zcard(keys.readers())).as("the read grant is still on the server").isOne();
            read.checkValid();
            assertThat(b.readWriteLock(name).writeLock().tryAcquire()).as("a writer while the reader holds")
                    .isEmpty();
        }
    }

    /**
     * The acquire script runs and grants, its reply is lost, then the connection drops: the clean-up cannot be sent
     * while disconnected. It is retried once the client is connected again, so the grant nobody holds does not
     * keep the lock for its whole lease, and the same thread is not told busy by it.
     */
    @Test
    void aGrantWhoseReplyWasLostIsCleanedUpAfterTheReconnectNotLeftForItsLease() throws Exception {
        String name = unique("ghost");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(60)));
             LockClient b = fixture.newClient(ClientConfig.defaults())) {
            dev.baton.faultproxy.FaultProxy proxy = fixture.proxy(a);
            proxy.fault(dev.baton.faultproxy.FaultProxy.Mode.DROP_RESPONSES);
            Thread resetter = new Thread(() -> {
                await().atMost(Duration.ofSeconds(5)).until(() -> fixture.admin().exists(keys.exclusive()) == 1);
                proxy.fault(dev.baton.faultproxy.FaultProxy.Mode.RESET);
            });
            resetter.start();
            assertThatThrownBy(() -> a.lock(name).acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockBackendException.class).hasMessageContaining("unknown outcome")
                    .hasMessageNotContaining("was deleted");
            resetter.join();
            assertThat(fixture.admin().exists(keys.exclusive())).as("the grant whose reply was lost").isOne();
            long healed = System.nanoTime();
            proxy.heal();
            try (Lease l = b.lock(name).acquire(Duration.ofSeconds(20))) {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed);
                System.out.printf("[redis] lost reply: another client granted %d ms after the network healed"
                        + " (lease 60 s)%n", ms);
                assertThat(l.isValid()).isTrue();
            }
            try (Lease l = a.lock(name).acquire(Duration.ofSeconds(10))) {
                assertThat(l.isValid()).as("the same thread, after its lost grant").isTrue();
            }
        }
    }

    /**
     * Lettuce replays, after a reconnect, the commands that were in flight when a connection dropped. A late acquire
     * would then create a grant nobody knows it holds; Baton's own client never replays a lock script. The script
     * is held on the server by {@code CLIENT PAUSE WRITE} while its connection is killed.
     */
    @Test
    void anAcquireInFlightWhenItsConnectionDropsIsNeverReplayed() throws Exception {
        String name = unique("replay");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = direct(Duration.ofSeconds(5), Duration.ofMillis(100))) {
            String connection = RedisLockBackend.connectionName(a.clientId());
            redisCli("client", "pause", "10000", "WRITE"); // ended by the unpause below: long only for a slow thread start
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    a.lock(name).tryAcquire().ifPresent(Lease::close);
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            try {
                t.start();
                String id = await().atMost(Duration.ofSeconds(8)).until(() -> pausedScript(connection), v -> v != null);
                fixture.admin().clientKill(io.lettuce.core.KillArgs.Builder.id(Long.parseLong(id)));
            } finally {
                redisCli("client", "unpause");
            }
            t.join(10_000);
            assertThat(thrown.get()).as("the acquire failed with its connection").isInstanceOf(LockBackendException.class);
            // once reconnected, a round trip on the same connection comes after anything it would have replayed
            String other = unique("after-replay");
            await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                    .until(() -> a.lock(other).tryAcquire().map(l -> { l.close(); return true; }).orElse(false));
            assertThat(fixture.admin().exists(keys.counter())).as("the acquire script never ran").isZero();
            assertThat(fixture.admin().exists(keys.exclusive())).isZero();
        }
    }

    /**
     * An interrupt that arrives while the waiter's script is on its way (held here by {@code CLIENT PAUSE WRITE})
     * ends the wait as any interrupt does, once the script's outcome is known: {@link dev.baton.LockInterruptedException},
     * the flag set, no place left in line. (Lettuce's sync API would throw "Command interrupted" with an unknown
     * outcome instead.)
     */
    @Test
    void anInterruptDuringAScriptEndsTheWaitOnceItsOutcomeIsKnown() throws Exception {
        String name = unique("interrupt-in-script");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient h = fixture.newClient(ClientConfig.defaults());
             LockClient w = direct(Duration.ofSeconds(5), Duration.ofMillis(100));
             Lease held = h.lock(name).acquire(Duration.ofSeconds(5))) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicReference<Boolean> flag = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    w.lock(name).acquire(Duration.ofSeconds(30)).close();
                } catch (Throwable e) {
                    thrown.set(e);
                    flag.set(Thread.currentThread().isInterrupted());
                }
            });
            redisCli("client", "pause", "10000", "WRITE"); // ended by the unpause below: long only for a slow thread start
            try {
                t.start();
                String connection = RedisLockBackend.connectionName(w.clientId());
                await().atMost(Duration.ofSeconds(8)).until(() -> pausedScript(connection), v -> v != null);
                t.interrupt();
            } finally {
                redisCli("client", "unpause");
            }
            t.join(10_000);
            assertThat(thrown.get()).isInstanceOf(dev.baton.LockInterruptedException.class).hasMessageContaining(name);
            assertThat(flag.get()).as("interrupt flag").isTrue();
            assertThat(fixture.admin().zcard(keys.line())).as("its place withdrawn").isZero();
            assertThat(held.isValid()).isTrue();
        }
    }

    /** The id of the named connection while a script of it is held by CLIENT PAUSE, else null. */
    private String pausedScript(String connectionName) {
        for (String line : fixture.admin().clientList().split("\n")) {
            if (line.contains(" name=" + connectionName + " ") && line.contains(" flags=b ")
                    && line.contains(" cmd=evalsha ")) {
                for (String f : line.split(" ")) {
                    if (f.startsWith("id=")) {
                        return f.substring(3);
                    }
                }
            }
        }
        return null;
    }

    private void redisCli(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(redis.port())));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(out).as(String.join(" ", cmd)).isEqualTo("OK");
    }

    @Test
    void renewalIsOneScriptCallForEveryHeldLease() throws Exception {
        AtomicInteger scripts = new AtomicInteger();
        RedisClient mine = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        mine.addListener(new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                var type = event.getCommand().getType();
                if (type == CommandType.EVALSHA || type == CommandType.EVAL) {
                    scripts.incrementAndGet();
                }
            }
        });
        try {
            List<Lease> leases = new ArrayList<>();
            try (LockClient c = RedisLocks.builder(mine).keyPrefix(RedisFixture.PREFIX)
                    // 2 s leases renewed every 200 ms: checkValid() below fails only if renewal stopped, not when
                    // one round's answer is a few hundred ms late on a busy machine
                    .leaseTime(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(200)).build()) {
                for (int i = 0; i < 50; i++) {
                    leases.add(c.lock(unique("many")).acquire(Duration.ofSeconds(5)));
                }
                scripts.set(0);
                long start = System.nanoTime();
                Thread.sleep(1200); // six renewal intervals
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                int calls = scripts.get();
                System.out.printf("[redis] %d script calls in %d ms renewing 50 leases every 200 ms%n", calls, ms);
                assertThat(calls).as("one renewal call per interval, not one per lease").isBetween(1, (int) (ms / 200) + 2);
                for (Lease l : leases) {
                    l.checkValid();
                }
                leases.forEach(Lease::close);
            }
            // Baton closed only its own connections: the user's client still works
            try (StatefulRedisConnection<String, String> c = mine.connect()) {
                assertThat(c.sync().ping()).isEqualTo("PONG");
            }
        } finally {
            mine.shutdown();
        }
    }

    @Test
    void waitersRetryAtOnceWhenTheirPubSubConnectionComesBack() throws Exception {
        String name = unique("resync");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        // long lease, long poll: only the resynchronization after the pub/sub reconnect ends the wait early
        try (LockClient h = direct(Duration.ofSeconds(60), Duration.ofSeconds(60));
             LockClient w = direct(Duration.ofSeconds(60), Duration.ofSeconds(60))) {
            Lease held = h.lock(name).acquire(Duration.ofSeconds(5));
            AtomicReference<Long> grantedAt = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try (Lease l = w.lock(name).acquire(Duration.ofSeconds(50))) {
                    grantedAt.set(System.nanoTime());
                }
            });
            t.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> fixture.admin().zcard(keys.line()) == 1);
            // the grant vanishes without a release message (as when a failover loses it), then pub/sub drops
            fixture.admin().del(keys.exclusive());
            long killed = System.nanoTime();
            String pubSubId = pubSubConnection(w);
            fixture.admin().clientKill(io.lettuce.core.KillArgs.Builder.id(Long.parseLong(pubSubId)));
            t.join(30_000);
            assertThat(grantedAt.get()).as("waiter granted after its pub/sub came back").isNotNull();
            long ms = TimeUnit.NANOSECONDS.toMillis(grantedAt.get() - killed);
            System.out.printf("[redis] pub/sub connection killed to waiter's grant: %d ms (poll 60 s)%n", ms);
            assertThat(ms).isLessThan(20_000);
            held.close();
        }
    }

    private String pubSubConnection(LockClient c) {
        String name = "name=" + RedisLockBackend.connectionName(c.clientId()) + " ";
        for (String line : fixture.admin().clientList().split("\n")) {
            if (line.contains(name) && line.contains(" flags=P ")) {
                for (String f : line.split(" ")) {
                    if (f.startsWith("id=")) {
                        return f.substring(3);
                    }
                }
            }
        }
        throw new AssertionError("no pub/sub connection of " + c.clientId());
    }

    private static long grantOf(LockClient c, String name) {
        try (Lease l = c.lock(name).acquire(Duration.ofSeconds(5))) {
            return l.fencingToken();
        }
    }

    private long serverMicros() {
        List<String> t = fixture.admin().time();
        return Long.parseLong(t.get(0)) * 1_000_000 + Long.parseLong(t.get(1));
    }

    /** A restart without persistence loses the counter; a stale copy (a replica's) sets it back. */
    @Test
    void tokensIncreaseWhenTheCounterIsLostOrSetBack() {
        String name = unique("counter-back");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = fixture.newClient(ClientConfig.defaults());
             LockClient b = fixture.newClient(ClientConfig.defaults())) {
            long first = grantOf(a, name);
            fixture.admin().del(keys.counter());
            long afterLoss = grantOf(b, name);
            assertThat(afterLoss).as("after the counter was lost").isGreaterThan(first);
            fixture.admin().set(keys.counter(), "1");
            long afterSetBack = grantOf(b, name);
            assertThat(afterSetBack).as("after the counter was set back to 1").isGreaterThan(afterLoss);
            fixture.admin().set(keys.counter(), Long.toString(afterSetBack - 1_000_000));
            assertThat(grantOf(a, name)).as("after the counter was set one second back").isGreaterThan(afterSetBack);
        }
    }

    /**
     * A counter far ahead of the server's clock (a primary whose clock ran ahead, or a counter set forward) that is
     * then lost: the server alone would hand out a token below the ones before. A client that saw a higher token
     * for the lock gets one above it, and the counter is repaired for every other client.
     */
    @Test
    void aClientThatSawAHigherTokenIsNeverGrantedALowerOneAndRepairsTheCounter() {
        String name = unique("counter-ahead");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = fixture.newClient(ClientConfig.defaults());
             LockClient b = fixture.newClient(ClientConfig.defaults())) {
            grantOf(a, name);
            long ahead = serverMicros() + 3_600_000_000L; // an hour ahead of the server's clock
            fixture.admin().set(keys.counter(), Long.toString(ahead));
            long high = grantOf(a, name);
            assertThat(high).isGreaterThan(ahead);
            fixture.admin().del(keys.counter());
            long next = grantOf(a, name);
            System.out.printf("[redis] token %d, counter lost, next token %d (server clock %d)%n", high, next,
                    serverMicros());
            assertThat(next).as("the grant after the counter was lost, to a client that saw token " + high)
                    .isGreaterThan(high);
            assertThat(grantOf(b, name)).as("another client's grant after the repair").isGreaterThan(next);
        }
    }

    @Test
    void tokenCountersExpireAfterTheLastGrantAndTokensStillIncrease() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            names.add(unique("counter-expiry"));
        }
        try (LockClient a = RedisLocks.builder(RedisURI.create(redis.host(), redis.port()))
                .keyPrefix(RedisFixture.PREFIX).tokenCounterExpiry(Duration.ofSeconds(1)).build();
             LockClient b = fixture.newClient(ClientConfig.defaults())) {
            List<Long> first = new ArrayList<>();
            long lastBump = 0;
            for (String n : names) {
                first.add(grantOf(a, n));
                lastBump = System.nanoTime(); // at or before the read grant's bump of the counter, the last one
                try (Lease l = a.readWriteLock(n).readLock().acquire(Duration.ofSeconds(5))) {
                    first.set(first.size() - 1, l.fencingToken());
                }
            }
            String[] counters = names.stream().map(n -> RedisKeys.Lock.of(RedisFixture.PREFIX, n).counter())
                    .toArray(String[]::new);
            // the last counter, bumped just now: at most 1 s left; gone (-2) only if a whole second has passed since
            // its bump (a slow machine). The default expiry (7 days), none (-1) or one far too short fail here, and
            // the wait below shows every counter expire
            long ttl = fixture.admin().pttl(counters[counters.length - 1]);
            long sinceBump = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastBump);
            if (ttl == -2) {
                assertThat(sinceBump).as("the last counter was gone %d ms after its bump", sinceBump)
                        .isGreaterThanOrEqualTo(1000);
            } else {
                assertThat(ttl).as("the counter's expiry").isBetween(1L, 1000L);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.admin().exists(counters) == 0);
            for (int i = 0; i < names.size(); i++) {
                assertThat(grantOf(b, names.get(i))).as(names.get(i)).isGreaterThan(first.get(i));
            }
            assertThat(fixture.admin().pttl(counters[0])).as("the default expiry: 7 days")
                    .isGreaterThan(Duration.ofDays(7).minusMinutes(1).toMillis());
        }
        RedisLocks.Builder builder = RedisLocks.builder(RedisURI.create("redis://127.0.0.1:6379"));
        assertThatThrownBy(() -> builder.tokenCounterExpiry(Duration.ofMillis(999)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tokenCounterExpiry");
        assertThatThrownBy(() -> builder.tokenCounterExpiry(null)).hasMessageContaining("tokenCounterExpiry");
    }

    /**
     * A real restart of the class's own Redis, which runs without persistence: every key is lost, the counters too.
     * Tokens still increase, because a missing counter starts at the server's time in microseconds.
     */
    @Test
    void tokensIncreaseAcrossARealRestartThatLostEveryKey() throws Exception {
        String name = unique("restart");
        RedisKeys.Lock keys = RedisKeys.Lock.of(RedisFixture.PREFIX, name);
        try (LockClient a = fixture.newClient(ClientConfig.defaults())) {
            long before;
            try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                before = l.fencingToken();
            }
            redis.restart(); // SHUTDOWN (no persistence: every key is lost), then started again
            assertThat(fixture.admin().exists(keys.counter())).as("the restart lost the counter").isZero();
            long after;
            // the same client, once reconnected (its scripts are gone from the cache: NOSCRIPT, then EVAL)
            after = await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
                try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                    return l.fencingToken();
                }
            }, t -> t > 0);
            System.out.printf("[redis] token before the restart %d, after %d%n", before, after);
            assertThat(after).isGreaterThan(before);
            try (LockClient b = fixture.newClient(ClientConfig.defaults());
                 Lease l = b.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(l.fencingToken()).isGreaterThan(after);
            }
        }
    }
}
