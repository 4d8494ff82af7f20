package dev.baton.zookeeper;

import dev.baton.ForcedRelease;
import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.LockInterruptedException;
import dev.baton.LockLostException;
import dev.baton.LockTimeoutException;
import dev.baton.faultproxy.FaultProxy;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.TestServers;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What the contract ladder does not cover on ZooKeeper: the line (FIFO across clients, one watch per waiter on its
 * predecessor, a withdrawn waiter's node deleted), czxid tokens across a parent's deletion, connection states
 * (SUSPENDED, RECONNECTED, LOST) as the core sees them, a protected create recovered after a connection loss, and
 * the builder. The server restart is {@link ZooKeeperRestartIT}'s alone.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperBackendIT {
    private ZooKeeperFixture fixture;

    @BeforeAll
    void open() {
        fixture = new ZooKeeperFixture();
    }

    @AfterAll
    void close() {
        fixture.close();
    }

    private static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    private String parent(String name) {
        return fixture.root() + "/" + ZooKeeperNames.encode(name);
    }

    /** The lock's member nodes on the server, in line order. */
    private List<String> members(String name) throws Exception {
        List<String> out = new ArrayList<>();
        try {
            for (String c : fixture.admin().getChildren().forPath(parent(name))) {
                ZooKeeperNames.member(c).ifPresent(m -> out.add(m.node()));
            }
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            return out;
        }
        out.sort(Comparator.comparingLong(n -> ZooKeeperNames.member(n).orElseThrow().sequence()));
        return out;
    }

    /** A lock client over a Curator client of the test's own, through its own proxy. */
    private record Own(FaultProxy proxy, CuratorFramework curator, LockClient client) implements AutoCloseable {
        @Override
        public void close() {
            try {
                client.close();
            } finally {
                curator.close();
                proxy.close();
            }
        }
    }

    private Own own(Duration session, Duration renewInterval) {
        FaultProxy proxy = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT);
        CuratorFramework curator = org.apache.curator.framework.CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + proxy.port()).sessionTimeoutMs((int) session.toMillis())
                .connectionTimeoutMs(5000).retryPolicy(new org.apache.curator.retry.BoundedExponentialBackoffRetry(50, 500, 3))
                .build();
        curator.start();
        LockClient client = ZooKeeperLocks.builder(curator).rootPath(fixture.root()).leaseTime(session)
                .renewInterval(renewInterval).build();
        return new Own(proxy, curator, client);
    }

    private LockClient client() {
        return fixture.newClient(ClientConfig.defaults());
    }

    /**
     * Two threads of one client hand the lock to each other, with a 20 s safety-net poll: a release in the client
     * wakes none of its waiters (the server announces the next one: {@code AnnouncesTurns}), so a waiter whose watch
     * did not fire would sit out the poll and its 5 s wait would time out.
     */
    @Test
    void twoThreadsOfOneClientHandTheLockToEachOtherWithoutTheSafetyNetPoll() throws Exception {
        String name = unique("local-turns");
        try (LockClient a = ZooKeeperLocks.builder(ZooKeeperFixture.DIRECT).rootPath(fixture.root())
                .minPollInterval(Duration.ofSeconds(20)).maxPollInterval(Duration.ofSeconds(20)).build()) {
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger grants = new AtomicInteger();
            Runnable loop = () -> {
                for (int i = 0; i < 20; i++) {
                    try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                        assertThat(inside.incrementAndGet()).isEqualTo(1);
                        grants.incrementAndGet();
                        inside.decrementAndGet();
                    }
                }
            };
            long t0 = System.nanoTime();
            CompletableFuture<Void> one = CompletableFuture.runAsync(loop);
            CompletableFuture<Void> two = CompletableFuture.runAsync(loop);
            one.get(60, TimeUnit.SECONDS);
            two.get(60, TimeUnit.SECONDS);
            System.out.printf("[zookeeper] 2 threads of one client, 40 grants, safety-net poll 20 s: %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            assertThat(grants).hasValue(40);
        }
    }

    /** The operator's force release ({@code baton release}): only under the holder's token, and the holder hears. */
    @Test
    void forceReleaseDeletesTheHoldersNodeOnlyUnderItsTokenAndTheHolderLosesIt() throws Exception {
        String name = unique("force");
        ZooKeeperLockClient operator = ZooKeeperLocks.builder(TestServers.ZOOKEEPER_HOST + ":"
                + TestServers.ZOOKEEPER_PORT).rootPath(fixture.root()).build();
        try (operator; LockClient holder = client(); LockClient next = client()) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            held.onLost(lost::complete);
            CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
                try (Lease l = next.lock(name).acquire(Duration.ofSeconds(20))) {
                    return l.fencingToken();
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> members(name).size() == 2);

            assertThat(operator.forceRelease(name, OptionalLong.of(held.fencingToken() + 1))).as("a wrong token").isEmpty();
            assertThat(held.isValid()).isTrue();
            ForcedRelease r = operator.forceRelease(name, OptionalLong.of(held.fencingToken())).orElseThrow();
            assertThat(r.holder()).isEqualTo(held.holderId());
            assertThat(r.fencingToken()).isEqualTo(held.fencingToken());
            assertThat(r.remaining()).as("no lease on the server").isNull();

            assertThat(waiter.get(20, TimeUnit.SECONDS)).as("the next in line").isGreaterThan(held.fencingToken());
            assertThat(lost.get(10, TimeUnit.SECONDS).getMessage()).contains(name);
            assertThat(held.isValid()).isFalse();
            held.close();
            assertThat(operator.forceRelease(name, OptionalLong.empty())).as("nothing held any more").isEmpty();
        }
    }

    @Test
    void waitersInFourClientsAreGrantedInArrivalOrder() throws Exception {
        String name = unique("fifo");
        List<LockClient> clients = new ArrayList<>();
        ConcurrentLinkedQueue<Integer> order = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        try (LockClient holder = client()) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            for (int i = 0; i < 4; i++) {
                LockClient c = client();
                clients.add(c);
                int id = i;
                waiters.add(CompletableFuture.runAsync(() -> {
                    try (Lease l = c.lock(name).acquire(Duration.ofSeconds(30))) {
                        order.add(id);
                    }
                }));
                int expected = i + 2;
                // the next waiter starts only once this one has its place in line
                await().atMost(Duration.ofSeconds(10)).until(() -> members(name).size() == expected);
            }
            held.close();
            CompletableFuture.allOf(waiters.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            System.out.printf("[zookeeper] grant order of 4 waiters in 4 clients: %s%n", order);
            assertThat(new ArrayList<>(order)).containsExactly(0, 1, 2, 3);
        } finally {
            clients.forEach(LockClient::close);
        }
    }

    /** {@code wchc}: the paths each session watches, by session id. */
    private static Map<Long, List<String>> watchesBySession() {
        Map<Long, List<String>> out = new TreeMap<>();
        Long session = null;
        for (String line : ZooKeeperFixture.fourLetterWord("wchc").split("\n")) {
            if (line.startsWith("0x")) {
                session = Long.parseUnsignedLong(line.substring(2).trim(), 16);
                out.put(session, new ArrayList<>());
            } else if (session != null && line.trim().startsWith("/")) {
                out.get(session).add(line.trim());
            }
        }
        return out;
    }

    @Test
    void eachWaiterWatchesOnlyItsPredecessorAndNobodyWatchesTheParent() throws Exception {
        String name = unique("herd");
        List<LockClient> clients = new ArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        try (LockClient holder = client()) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            for (int i = 0; i < 5; i++) {
                LockClient c = client();
                clients.add(c);
                waiters.add(CompletableFuture.runAsync(() -> c.lock(name).acquire(Duration.ofSeconds(30)).close()));
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> members(name).size() == 6);
            List<String> line = members(name);
            Map<Long, String> nodeOfSession = new TreeMap<>();
            for (String m : line) {
                Stat stat = fixture.admin().checkExists().forPath(parent(name) + "/" + m);
                nodeOfSession.put(stat.getEphemeralOwner(), m);
            }
            // every waiter has set its one watch once its first attempt returned busy; the holder sets none (its
            // renewal reads its node)
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                Map<Long, List<String>> w = watchesBySession();
                return nodeOfSession.entrySet().stream().filter(e -> line.indexOf(e.getValue()) > 0)
                        .allMatch(e -> w.getOrDefault(e.getKey(), List.of()).stream()
                                .anyMatch(p -> p.startsWith(parent(name) + "/")));
            });
            Map<Long, List<String>> watches = watchesBySession();
            int underParent = 0;
            for (Map.Entry<Long, String> e : nodeOfSession.entrySet()) {
                List<String> mine = watches.getOrDefault(e.getKey(), List.of()).stream()
                        .filter(p -> p.startsWith(parent(name))).toList();
                underParent += mine.size();
                int at = line.indexOf(e.getValue());
                if (at == 0) {
                    assertThat(mine).as("watches of the holder's session (%s)", e.getValue()).isEmpty();
                    continue;
                }
                assertThat(mine).as("watches of the session of member %d (%s)", at, e.getValue())
                        .containsExactly(parent(name) + "/" + line.get(at - 1));
            }
            long parentWatchers = watches.values().stream().flatMap(List::stream)
                    .filter(p -> p.equals(parent(name))).count();
            System.out.printf("[zookeeper] 1 holder + 5 waiters: %d watches under the lock (each waiter's on its"
                    + " predecessor, none of the holder's), %d on the parent%n", underParent, parentWatchers);
            assertThat(parentWatchers).as("child watches on the parent (a herd)").isZero();
            held.close();
            CompletableFuture.allOf(waiters.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        } finally {
            clients.forEach(LockClient::close);
        }
    }

    /** Requests the server received on the proxy's connections ({@code cons}: {@code recved} per connection). */
    private static long receivedFrom(FaultProxy proxy) {
        Matcher m = Pattern.compile("/127\\.0\\.0\\.1:(\\d+)\\[\\d+]\\([^)]*recved=(\\d+)")
                .matcher(ZooKeeperFixture.fourLetterWord("cons"));
        long n = 0;
        while (m.find()) {
            if (proxy.upstreamPorts().contains(Integer.parseInt(m.group(1)))) {
                n += Long.parseLong(m.group(2));
            }
        }
        return n;
    }

    /** {@code zk_packets_received} of {@code mntr}: every request the server received, from anyone. */
    private static long packetsReceived() {
        Matcher m = Pattern.compile("zk_packets_received\\s+(\\d+)").matcher(ZooKeeperFixture.fourLetterWord("mntr"));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /** Starts {@code n} waiters on {@code name} in one client (one session), and waits until each has its place. */
    private List<CompletableFuture<Void>> waiters(LockClient c, String name, int n, int membersBefore) {
        List<CompletableFuture<Void>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(CompletableFuture.runAsync(() -> c.lock(name).acquire(Duration.ofSeconds(60)).close(),
                    java.util.concurrent.Executors.newSingleThreadExecutor()));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> members(name).size() == membersBefore + n);
        return out;
    }

    /**
     * Twenty waiters of one client (its default 500 ms safety-net poll) wait 3 s behind a holder: each re-read its
     * line every 250-500 ms although its watch was armed (about 120-240 requests in 3 s). A waiter whose watch is armed
     * waits on it: the connection carries only the session's pings.
     */
    @Test
    void waitersWithAnArmedWatchSendNothingWhileTheyWait() throws Exception {
        String name = unique("idle-wait");
        try (FaultProxy proxy = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT);
             LockClient holder = client();
             LockClient w = ZooKeeperLocks.builder("127.0.0.1:" + proxy.port()).rootPath(fixture.root()).build()) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            List<CompletableFuture<Void>> waiting = waiters(w, name, 20, 1);
            Thread.sleep(1000); // every waiter past its first look and its watch armed
            long before = receivedFrom(proxy);
            Thread.sleep(3000);
            long received = receivedFrom(proxy) - before;
            System.out.printf("[zookeeper] 20 waiters of one client, 3 s idle: %d requests received from it%n", received);
            assertThat(received).as("requests from 20 waiters with armed watches in 3 s").isLessThan(15);
            held.close();
            CompletableFuture.allOf(waiting.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * The cost of 100 waiters to the server, Baton's against Curator's {@code InterProcessMutex} in the same run: the
     * requests each client's connection carried in 10 s of waiting, and the server's {@code zk_packets_received}
     * over each window (everyone's traffic).
     */
    @Test
    void aHundredWaitersCostTheServerNoMoreThanCuratorsOwn() throws Exception {
        String name = unique("hundred");
        String curatorPath = fixture.root() + "-curator/" + name;
        long window = 10_000;
        try (FaultProxy ours = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT);
             FaultProxy theirs = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT);
             LockClient holder = client();
             LockClient w = ZooKeeperLocks.builder("127.0.0.1:" + ours.port()).rootPath(fixture.root()).build();
             CuratorFramework curator = org.apache.curator.framework.CuratorFrameworkFactory.builder()
                     .connectString("127.0.0.1:" + theirs.port()).sessionTimeoutMs(10_000).connectionTimeoutMs(5000)
                     .retryPolicy(new org.apache.curator.retry.BoundedExponentialBackoffRetry(50, 1000, 3)).build()) {
            curator.start();
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            List<CompletableFuture<Void>> waiting = waiters(w, name, 100, 1);
            Thread.sleep(1000);
            long mntr0 = packetsReceived();
            long before = receivedFrom(ours);
            Thread.sleep(window);
            long oursIn = receivedFrom(ours) - before;
            long mntrOurs = packetsReceived() - mntr0;

            org.apache.curator.framework.recipes.locks.InterProcessMutex blocker =
                    new org.apache.curator.framework.recipes.locks.InterProcessMutex(fixture.admin(), curatorPath);
            blocker.acquire();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(100);
            List<java.util.concurrent.Future<?>> curatorWaiters = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                curatorWaiters.add(pool.submit(() -> {
                    var m = new org.apache.curator.framework.recipes.locks.InterProcessMutex(curator, curatorPath);
                    m.acquire(60, TimeUnit.SECONDS);
                    m.release();
                    return null;
                }));
            }
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> fixture.admin().getChildren().forPath(curatorPath).size() == 101);
            Thread.sleep(1000);
            long mntr1 = packetsReceived();
            long before2 = receivedFrom(theirs);
            Thread.sleep(window);
            long theirsIn = receivedFrom(theirs) - before2;
            long mntrTheirs = packetsReceived() - mntr1;
            System.out.printf("[zookeeper] 100 waiters, requests/s from the waiters' client: Baton %.1f, Curator"
                    + " InterProcessMutex %.1f; server zk_packets_received/s over each window (all clients): %.1f,"
                    + " %.1f%n", oursIn * 1000.0 / window, theirsIn * 1000.0 / window, mntrOurs * 1000.0 / window,
                    mntrTheirs * 1000.0 / window);
            blocker.release();
            for (var f : curatorWaiters) {
                f.get(30, TimeUnit.SECONDS);
            }
            pool.shutdown();
            held.close();
            CompletableFuture.allOf(waiting.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            assertThat(oursIn).as("requests from Baton's 100 waiters in %d ms, against Curator's %d", window,
                    theirsIn).isLessThanOrEqualTo(2 * theirsIn + 2);
        }
    }

    @Test
    void aWaiterThatTimesOutIsInterruptedOrTriesOnceLeavesNoNodeAndClosingWithdrawsWaiters() throws Exception {
        String name = unique("withdraw");
        try (LockClient holder = client(); LockClient b = client()) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            assertThat(b.lock(name).tryAcquire()).isEmpty();
            assertThat(members(name)).as("after a busy try-once").hasSize(1);

            assertThatThrownBy(() -> b.lock(name).acquire(Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class).hasMessageContaining(holder.clientId());
            assertThat(members(name)).as("after a timeout").hasSize(1);

            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    b.lock(name).acquire();
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            waiter.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> members(name).size() == 2);
            waiter.interrupt();
            waiter.join(5000);
            assertThat(thrown.get()).isInstanceOf(LockInterruptedException.class);
            assertThat(members(name)).as("after an interrupt").hasSize(1);

            LockClient c = client();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(() -> c.lock(name).acquire().close());
            await().atMost(Duration.ofSeconds(10)).until(() -> members(name).size() == 2);
            c.close();
            assertThat(members(name)).as("after the waiter's client closed").hasSize(1);
            assertThatThrownBy(() -> closing.get(10, TimeUnit.SECONDS)).hasMessageContaining("closed");
            held.close();
            assertThat(members(name)).isEmpty();
        }
    }

    @Test
    void tokensAreCzxidsAndIncreaseAcrossTheParentsDeletion() throws Exception {
        String name = unique("parent-gone");
        try (LockClient a = client()) {
            long first;
            String firstNode;
            try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                first = l.fencingToken();
                firstNode = members(name).get(0);
                Stat stat = fixture.admin().checkExists().forPath(parent(name) + "/" + firstNode);
                assertThat(first).as("token = the holder node's czxid").isEqualTo(stat.getCzxid());
                assertThat(a.list()).anySatisfy(info -> {
                    assertThat(info.name()).isEqualTo(name);
                    assertThat(info.holder()).isEqualTo(l.holderId());
                    assertThat(info.fencingToken()).isEqualTo(l.fencingToken());
                    assertThat(info.held()).isTrue();
                });
            }
            // the empty parent deleted, as the server reaps an empty container
            fixture.admin().delete().forPath(parent(name));
            try (Lease l = a.lock(name).acquire(Duration.ofSeconds(5))) {
                String secondNode = members(name).get(0);
                long seq1 = ZooKeeperNames.member(firstNode).orElseThrow().sequence();
                long seq2 = ZooKeeperNames.member(secondNode).orElseThrow().sequence();
                System.out.printf("[zookeeper] token before the parent's deletion 0x%x (sequence %d), after 0x%x"
                        + " (sequence %d)%n", first, seq1, l.fencingToken(), seq2);
                assertThat(seq2).as("the sequence suffix starts again").isEqualTo(seq1);
                assertThat(l.fencingToken()).isGreaterThan(first);
            }
        }
    }

    /**
     * A reader that learns of its grant late (its client was cut off when the writer ahead of it left) and a reader
     * that arrived meanwhile and was granted at once: the late one's token was its node's czxid, lower than the
     * token of the grant already made, so a resource fenced by the highest token refused a reader that held. A read
     * grant's token is the line's last change when the grant was seen, never lower than a grant the server answered
     * before; the next writer's is higher than both.
     */
    @Test
    void aReaderThatLearnsOfItsGrantLateGetsATokenNoLowerThanAReaderGrantedMeanwhile() throws Exception {
        String name = unique("late-reader");
        try (LockClient writer = client(); LockClient late = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(6)));
             LockClient early = client()) {
            Lease w = writer.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5));
            CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(
                    () -> late.readWriteLock(name).readLock().acquire(Duration.ofSeconds(30)));
            await().atMost(Duration.ofSeconds(5)).until(() -> members(name).size() == 2);
            Lease meanwhile;
            FaultProxy proxy = fixture.proxyOf(late);
            proxy.fault(FaultProxy.Mode.BLACKHOLE);
            try {
                w.close(); // the waiting reader holds from now on, but its client does not hear of it yet
                meanwhile = early.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
            } finally {
                proxy.heal();
            }
            Lease lateRead = waiting.get(20, TimeUnit.SECONDS);
            System.out.printf("[zookeeper] read grants: seen at once 0x%x, seen late 0x%x (writer before 0x%x)%n",
                    meanwhile.fencingToken(), lateRead.fencingToken(), w.fencingToken());
            assertThat(lateRead.fencingToken()).as("the late reader's token, after the writer's")
                    .isGreaterThan(w.fencingToken());
            assertThat(lateRead.fencingToken()).as("the late reader's token, seen after a read grant with token %d",
                    meanwhile.fencingToken()).isGreaterThanOrEqualTo(meanwhile.fencingToken());
            lateRead.checkValid();
            meanwhile.checkValid();
            lateRead.close();
            meanwhile.close();
            try (Lease next = writer.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5))) {
                assertThat(next.fencingToken()).as("the next writer's token").isGreaterThan(lateRead.fencingToken())
                        .isGreaterThan(meanwhile.fencingToken());
            }
        }
    }

    @Test
    void aSuspendedLeaseIsInvalidThenValidAgainOnceItsNodeIsVerifiedAfterReconnecting() throws Exception {
        String name = unique("suspend");
        String gone = unique("suspend-gone");
        Duration session = Duration.ofSeconds(6);
        // renewed every 200 ms, and the connection reset (not black-holed), so Curator's SUSPENDED comes at once and the
        // lease's deadline (last renewal + 6 s) leaves seconds for the reconnect after the heal: uncertain, not lost.
        // (With a black hole, SUSPENDED came only at 2/3 of the session timeout and the reconnect attempt made during
        // the cut hung until its own timeout, so under load the deadline passed first: the test failed once.)
        try (Own own = own(session, Duration.ofMillis(200))) {
            LockClient a = own.client();
            Lease kept = a.lock(name).acquire(Duration.ofSeconds(5));
            Lease deleted = a.lock(gone).acquire(Duration.ofSeconds(5));
            AtomicInteger lost = new AtomicInteger();
            AtomicInteger lostDeleted = new AtomicInteger();
            kept.onLost(e -> lost.incrementAndGet());
            deleted.onLost(e -> lostDeleted.incrementAndGet());
            long cut = System.nanoTime();
            own.proxy().fault(FaultProxy.Mode.RESET);
            try {
                await().atMost(session).pollInterval(Duration.ofMillis(20)).until(() -> !kept.isValid());
                long suspendedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
                assertThat(lost).as("uncertain, not lost").hasValue(0);
                assertThatThrownBy(kept::checkValid).isInstanceOf(LockBackendException.class);
                assertThat(deleted.isValid()).isFalse();
                // behind the client's back, one of its nodes goes
                fixture.admin().delete().forPath(parent(gone) + "/" + members(gone).get(0));
                System.out.printf("[zookeeper] cut-off to SUSPENDED (isValid false): %d ms (session %d ms)%n",
                        suspendedMs, session.toMillis());
            } finally {
                own.proxy().heal();
            }
            long healed = System.nanoTime();
            await().atMost(session).pollInterval(Duration.ofMillis(20)).until(kept::isValid);
            System.out.printf("[zookeeper] heal to valid again (RECONNECTED, node verified): %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed));
            kept.checkValid();
            assertThat(lost).hasValue(0);
            await().atMost(session).until(() -> lostDeleted.get() == 1);
            assertThatThrownBy(deleted::checkValid).isInstanceOf(LockLostException.class);
            assertThat(deleted.isValid()).isFalse();
            try (LockClient b = client()) {
                assertThat(b.lock(name).tryAcquire()).as("still held").isEmpty();
                assertThat(b.lock(gone).tryAcquire()).as("its node was deleted").isPresent().get()
                        .satisfies(Lease::close);
            }
            kept.close();
            deleted.close();
            assertThat(lostDeleted).hasValue(1);
        }
    }

    @Test
    void anExpiredSessionLosesEveryLeaseOnceAndTheClientGoesOnWithANewSession() throws Exception {
        String name = unique("expire");
        Duration lease = Duration.ofSeconds(2);
        try (LockClient a = fixture.newClient(ClientConfig.lease(lease)); LockClient b = client()) {
            Lease held = a.lock(name).acquire(Duration.ofSeconds(5));
            Lease other = a.lock(name + "-2").acquire(Duration.ofSeconds(5));
            AtomicInteger lost = new AtomicInteger();
            held.onLost(e -> lost.incrementAndGet());
            other.onLost(e -> lost.incrementAndGet());
            long sessionBefore = fixture.curatorOf(a).getZookeeperClient().getZooKeeper().getSessionId();
            long cut = System.nanoTime();
            try (AutoCloseable ignored = fixture.cutOff(a)) {
                // the server expires the session it no longer hears from: its nodes go, a waiter elsewhere gets in
                try (Lease next = b.lock(name).acquire(Duration.ofSeconds(15))) {
                    long grantedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
                    int lostAtGrant = lost.get();
                    // the client tells its loss by its own clock (the lease's deadline, Curator's LOST), not by the
                    // server's expiry that let the other client in: 3 s for a busy machine's scheduling
                    await().atMost(Duration.ofSeconds(3)).until(() -> lost.get() == 2);
                    System.out.printf("[zookeeper] cut-off to another client's grant (session expired on the"
                            + " server): %d ms (session %d ms); leases reported lost by then: %d of 2%n",
                            grantedMs, lease.toMillis(), lostAtGrant);
                    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
                }
            }
            await().atMost(Duration.ofSeconds(15)).until(() -> {
                long now = fixture.curatorOf(a).getZookeeperClient().getZooKeeper().getSessionId();
                return fixture.curatorOf(a).getZookeeperClient().isConnected() && now != sessionBefore;
            });
            Thread.sleep(500); // LOST and RECONNECTED after the heal must not report again
            assertThat(lost).as("each listener once").hasValue(2);
            held.close();
            other.close();
            try (Lease again = a.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(again.isValid()).isTrue();
                again.checkValid();
            }
        }
    }

    /**
     * A waiter cut off while its predecessor left: the server made its node the holder, then expired its session. Its
     * acquire must say so (an error naming the expired session), never time out as "not granted" (the server did show
     * it holding: {@code baton check}'s quick profile, pause on ZooKeeper, found that) nor take a silent new place at
     * the back of the line.
     */
    @Test
    void aWaiterWhoseSessionExpiredWhileItWaitedIsToldSoNotTimedOutOrRequeued() throws Exception {
        String name = unique("waiter-expired");
        Duration lease = Duration.ofSeconds(2);
        try (LockClient holder = client(); LockClient w = fixture.newClient(ClientConfig.lease(lease))) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> w.lock(name).acquire(Duration.ofSeconds(30)));
            await().atMost(Duration.ofSeconds(5)).until(() -> members(name).size() == 2);
            long session = fixture.curatorOf(w).getZookeeperClient().getZooKeeper().getSessionId();
            try (AutoCloseable ignored = fixture.cutOff(w)) {
                held.close(); // the waiter's node is the lowest now: the server shows it holding
                await().atMost(Duration.ofSeconds(2)).until(() -> members(name).size() == 1);
                // the server expires the session it no longer hears from, and deletes the node
                await().atMost(Duration.ofSeconds(15)).until(() -> members(name).isEmpty());
            }
            assertThat(waiting).failsWithin(Duration.ofSeconds(20))
                    .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .havingCause().isInstanceOf(LockBackendException.class)
                    .withMessageContaining("expired while waiting").withMessageContaining(Long.toHexString(session));
            assertThat(members(name)).as("no new place left behind").isEmpty();
        }
    }

    @Test
    void aProtectedCreateWhoseReplyWasLostFindsItsNodeAfterReconnecting() throws Exception {
        String name = unique("protected");
        try (LockClient a = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(6)))) {
            a.lock(name).acquire(Duration.ofSeconds(5)).close(); // the parent exists from now on
            FaultProxy proxy = fixture.proxyOf(a);
            proxy.fault(FaultProxy.Mode.DROP_RESPONSES);
            CompletableFuture<Lease> acquiring = CompletableFuture.supplyAsync(
                    () -> a.lock(name).acquire(Duration.ofSeconds(20)));
            try {
                // the create reached the server; its reply did not reach the client
                await().atMost(Duration.ofSeconds(10)).until(() -> members(name).size() == 1);
            } finally {
                proxy.heal(); // resets the connection that lost replies: a connection loss for the create
            }
            try (Lease lease = acquiring.get(20, TimeUnit.SECONDS)) {
                List<String> nodes = members(name);
                assertThat(nodes).as("one node: the protected create found its own").hasSize(1);
                Stat stat = new Stat();
                byte[] data = fixture.admin().getData().storingStatIn(stat).forPath(parent(name) + "/" + nodes.get(0));
                System.out.printf("[zookeeper] protected create recovered after a lost reply: node %s, token 0x%x%n",
                        nodes.get(0), lease.fencingToken());
                assertThat(lease.fencingToken()).as("token = the recovered node's czxid").isEqualTo(stat.getCzxid());
                assertThat(new String(data, StandardCharsets.UTF_8)).isEqualTo(lease.holderId());
                lease.checkValid();
            }
            assertThat(members(name)).isEmpty();
        }
    }

    @Test
    void theBuilderValidatesAndTiesTheLeaseTimeToTheSessionTimeout() throws Exception {
        assertThatThrownBy(() -> ZooKeeperLocks.builder("x:1").rootPath("baton")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rootPath 'baton' is not a valid znode path");
        assertThatThrownBy(() -> ZooKeeperLocks.builder("x:1").rootPath("/a/")).hasMessageContaining("rootPath");
        assertThatThrownBy(() -> ZooKeeperLocks.builder("x:1").rootPath("/")).hasMessageContaining("must not be '/'");
        assertThatThrownBy(() -> ZooKeeperLocks.builder("x:1").rootPath("/zookeeper/x"))
                .hasMessageContaining("/zookeeper");
        assertThatThrownBy(() -> ZooKeeperLocks.builder((String) null)).hasMessageContaining("connectString");
        assertThatThrownBy(() -> ZooKeeperLocks.builder("x:1").sessionTimeout(Duration.ofMillis(10)))
                .hasMessageContaining("sessionTimeout must be at least 100 ms");
        assertThatThrownBy(() -> ZooKeeperLocks.builder(ZooKeeperFixture.DIRECT).leaseTime(Duration.ofSeconds(3))
                .sessionTimeout(Duration.ofSeconds(2)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime (3000 ms) must not exceed sessionTimeout (2000 ms)");
        // the server's maxSessionTimeout is 60 s: a lease time beyond what it negotiates is refused
        assertThatThrownBy(() -> ZooKeeperLocks.builder(ZooKeeperFixture.DIRECT).leaseTime(Duration.ofSeconds(90))
                .sessionTimeout(Duration.ofSeconds(90)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the ZooKeeper session timeout the server negotiated (60000 ms)");
        long start = System.nanoTime();
        assertThatThrownBy(() -> ZooKeeperLocks.builder("127.0.0.1:1").connectionTimeout(Duration.ofMillis(500)).build())
                .isInstanceOf(LockBackendException.class).hasMessageContaining("cannot connect to ZooKeeper at 127.0.0.1:1");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5000);

        CuratorFramework users = fixture.curatorOf(client());
        assertThatThrownBy(() -> ZooKeeperLocks.builder(users).sessionTimeout(Duration.ofSeconds(5)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("connect string");
        // your CuratorFramework is used, never closed
        try (LockClient c = ZooKeeperLocks.builder(users).rootPath(fixture.root()).build()) {
            c.lock(unique("users")).acquire(Duration.ofSeconds(5)).close();
        }
        assertThat(users.getState()).isEqualTo(CuratorFrameworkState.STARTED);
        assertThat(users.checkExists().forPath("/")).isNotNull();
    }

    @Test
    void aConnectStringClientOwnsItsCuratorSessionAndClosesIt() throws Exception {
        TestServers.requireZooKeeper();
        try (FaultProxy proxy = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT)) {
            String name = unique("own");
            LockClient c = ZooKeeperLocks.builder("127.0.0.1:" + proxy.port()).rootPath(fixture.root())
                    .sessionTimeout(Duration.ofSeconds(3)).build();
            try (LockClient other = client()) {
                Lease l = c.lock(name).acquire(Duration.ofSeconds(5));
                assertThat(other.lock(name).tryAcquire()).isEmpty();
                assertThat(connectionsFrom(proxy)).as("Baton's own session").isEqualTo(1);
                l.close();
                c.close();
                await().atMost(Duration.ofSeconds(5)).until(() -> connectionsFrom(proxy) == 0);
                assertThat(other.lock(name).tryAcquire()).isPresent().get().satisfies(Lease::close);
            }
        }
    }

    private static int connectionsFrom(FaultProxy proxy) {
        Matcher m = Pattern.compile("/127\\.0\\.0\\.1:(\\d+)\\[").matcher(ZooKeeperFixture.fourLetterWord("cons"));
        int n = 0;
        while (m.find()) {
            if (proxy.upstreamPorts().contains(Integer.parseInt(m.group(1)))) {
                n++;
            }
        }
        return n;
    }

    @Test
    void inspectListsEachHolderWithItsToken() throws Exception {
        String x = unique("inspect-x");
        String rw = unique("inspect-rw");
        try (LockClient a = client(); LockClient b = client()) {
            try (Lease lx = a.lock(x).acquire(Duration.ofSeconds(5));
                 Lease r1 = a.readWriteLock(rw).readLock().acquire(Duration.ofSeconds(5));
                 Lease r2 = b.readWriteLock(rw).readLock().acquire(Duration.ofSeconds(5))) {
                List<LockInfo> infos = a.list();
                assertThat(infos).filteredOn(i -> i.name().equals(x)).singleElement()
                        .satisfies(i -> assertThat(i.fencingToken()).isEqualTo(lx.fencingToken()));
                assertThat(infos).filteredOn(i -> i.name().equals(rw)).extracting(LockInfo::holder)
                        .containsExactlyInAnyOrder(r1.holderId(), r2.holderId());
            }
            assertThat(a.list()).noneMatch(i -> i.name().equals(x) || i.name().equals(rw));
        }
    }

    /**
     * A renewal reads every held node in one read-only multi on ZooKeeper's own handle, which does not add a Curator
     * client's namespace: found in review, a user's namespaced client had every node read at the wrong path, every
     * lease lost at the first renewal, and (its nodes marked gone) its releases skipped the delete, so its locks
     * stayed held until its session ended.
     */
    @Test
    void leasesOnANamespacedCuratorClientAreRenewedAndReleased() throws Exception {
        String name = unique("namespace");
        CuratorFramework curator = org.apache.curator.framework.CuratorFrameworkFactory.builder()
                .connectString(TestServers.ZOOKEEPER_HOST + ":" + TestServers.ZOOKEEPER_PORT).namespace("baton-ns-it")
                .sessionTimeoutMs(10_000).connectionTimeoutMs(5000)
                .retryPolicy(new org.apache.curator.retry.BoundedExponentialBackoffRetry(50, 500, 3)).build();
        curator.start();
        try (curator; LockClient namespaced = ZooKeeperLocks.builder(curator).rootPath(fixture.root())
                .leaseTime(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(100)).build();
             LockClient other = ZooKeeperLocks.builder(curator).rootPath(fixture.root()).build()) {
            Lease held = namespaced.lock(name).acquire(Duration.ofSeconds(5));
            CountDownLatch lost = new CountDownLatch(1);
            held.onLost(e -> lost.countDown());
            // past its 2 s lease: only renewals (every 100 ms) keep it
            assertThat(lost.await(3, TimeUnit.SECONDS)).as("lost during 30 renewals").isFalse();
            assertThat(held.isValid()).isTrue();
            held.checkValid();
            held.close();
            try (Lease next = other.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }

    /** One renewal for several leases: the one whose node was deleted is lost, the others are renewed. */
    @Test
    void aRenewalLosesOnlyTheLeaseWhoseNodeWasDeleted() throws Exception {
        String name = unique("renew-some");
        try (Own own = own(Duration.ofSeconds(10), Duration.ofMillis(100))) {
            List<Lease> leases = new ArrayList<>();
            List<CountDownLatch> lost = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Lease l = own.client().lock(name + "-" + i).acquire(Duration.ofSeconds(5));
                CountDownLatch latch = new CountDownLatch(1);
                l.onLost(e -> latch.countDown());
                leases.add(l);
                lost.add(latch);
            }
            String deleted = members(name + "-1").get(0);
            fixture.admin().delete().forPath(parent(name + "-1") + "/" + deleted);
            assertThat(lost.get(1).await(5, TimeUnit.SECONDS)).as("the lease whose node was deleted").isTrue();
            assertThat(leases.get(1).isValid()).isFalse();
            assertThat(lost.get(0).getCount() + lost.get(2).getCount()).as("the others, not lost").isEqualTo(2);
            leases.get(0).checkValid();
            leases.get(2).checkValid();
            leases.forEach(Lease::close);
        }
    }
}
