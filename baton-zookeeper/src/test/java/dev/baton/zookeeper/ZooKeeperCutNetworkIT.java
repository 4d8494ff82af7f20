package dev.baton.zookeeper;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.faultproxy.FaultProxy;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.TestServers;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A ZooKeeper client whose network is cut (the fault proxy black-holes its connection) for less than its session
 * timeout: what its leases and calls do meanwhile and after.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ZooKeeperCutNetworkIT {
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

    private Own own(Duration session, Duration lease, Duration renewInterval) {
        return own(session, lease, renewInterval, Duration.ofSeconds(5));
    }

    private Own own(Duration session, Duration lease, Duration renewInterval, Duration connectionTimeout) {
        FaultProxy proxy = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT);
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + proxy.port()).sessionTimeoutMs((int) session.toMillis())
                .connectionTimeoutMs((int) connectionTimeout.toMillis())
                .retryPolicy(new BoundedExponentialBackoffRetry(50, 500, 3)).build();
        curator.start();
        LockClient client = ZooKeeperLocks.builder(curator).rootPath(fixture.root()).leaseTime(lease)
                .renewInterval(renewInterval).build();
        return new Own(proxy, curator, client);
    }

    /**
     * The lease (2 s) is lost during a 3.5 s cut, shorter than the session timeout (20 s): the session survives, and
     * its node with it. The node must go as soon as the network is back, without the application closing the lost
     * lease: another client gets the lock within seconds, not when the holder's session ends (never, here).
     */
    @Test
    void aLeaseLostDuringAShortDisconnectionReleasesItsNodeWithoutTheApplicationClosingIt() throws Exception {
        String name = unique("lost-short-cut");
        try (Own a = own(Duration.ofSeconds(20), Duration.ofSeconds(2), Duration.ofMillis(300));
             LockClient b = fixture.newClient(ClientConfig.defaults())) {
            long session = a.curator().getZookeeperClient().getZooKeeper().getSessionId();
            Lease held = a.client().lock(name).acquire(Duration.ofSeconds(5));
            CountDownLatch lost = new CountDownLatch(1);
            held.onLost(e -> lost.countDown());
            a.proxy().fault(FaultProxy.Mode.BLACKHOLE);
            try {
                assertThat(lost.await(10, TimeUnit.SECONDS)).as("the lease lost during the cut").isTrue();
                Thread.sleep(1000); // the cut goes on a little after the loss; the session lives on the server
            } finally {
                a.proxy().heal();
            }
            long healed = System.nanoTime();
            Optional<Lease> next;
            try {
                next = Optional.of(b.lock(name).acquire(Duration.ofSeconds(5)));
            } catch (dev.baton.LockTimeoutException e) {
                next = Optional.empty();
            }
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed);
            System.out.printf("[zookeeper] lease lost in a 20 s session during a short cut: another client's grant"
                    + " %d ms after the heal (%s)%n", tookMs, next.isPresent() ? "granted" : "not granted");
            assertThat(a.curator().getZookeeperClient().getZooKeeper().getSessionId())
                    .as("the holder's session survived the cut").isEqualTo(session);
            assertThat(next).as("another client's grant within 5 s of the heal (the holder's session lives 20 s"
                    + " and the application never closed its lost lease)").isPresent();
            assertThat(next.get().fencingToken()).isGreaterThan(held.fencingToken());
            next.get().close();
            held.close();
        }
    }

    /** How long a call took, in milliseconds, whether it returned or threw. */
    private static long millisOf(Runnable call) {
        long t0 = System.nanoTime();
        try {
            call.run();
        } catch (RuntimeException e) {
            System.out.printf("[zookeeper]   (threw %s: %s)%n", e.getClass().getSimpleName(), e.getMessage());
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    /**
     * With its network black-holed (a 20 s session, so it lives through the test; the Curator client's connection
     * timeout 2 s), each call of a client returned only after Curator's retries had each waited out the connection
     * timeout (about 23 s for tryAcquire, checkValid and close). Each returns within its own bound plus the connection
     * timeout, the bound of one request that gets no answer; the slack is for a loaded machine.
     */
    @Test
    void callsOfAClientWhoseNetworkIsCutReturnWithinTheConnectionTimeout() throws Exception {
        String name = unique("cut-calls");
        long bound = 2000;
        long slack = 2000;
        Own a = own(Duration.ofSeconds(20), Duration.ofSeconds(20), Duration.ofSeconds(5), Duration.ofMillis(bound));
        try (a; LockClient b = fixture.newClient(ClientConfig.defaults())) {
            Lease held = a.client().lock(name).acquire(Duration.ofSeconds(5));
            Lease busy = b.lock(name + "-busy").acquire(Duration.ofSeconds(5));
            a.proxy().fault(FaultProxy.Mode.BLACKHOLE);
            long tryFree = millisOf(() -> a.client().lock(name + "-free").tryAcquire().ifPresent(Lease::close));
            long tryBusy = millisOf(() -> a.client().lock(name + "-busy").tryAcquire().ifPresent(Lease::close));
            long check = millisOf(held::checkValid);
            long acquire = millisOf(() -> a.client().lock(name + "-busy").acquire(Duration.ofSeconds(1)).close());
            long release = millisOf(held::close);
            long close = millisOf(a.client()::close);
            System.out.printf("[zookeeper] network cut, connection timeout %d ms: tryAcquire (free) %d ms, tryAcquire"
                    + " (busy) %d ms, checkValid %d ms, acquire(1 s) %d ms, release %d ms, close %d ms%n", bound,
                    tryFree, tryBusy, check, acquire, release, close);
            assertThat(tryFree).as("tryAcquire of a free lock").isLessThan(bound + slack);
            assertThat(tryBusy).as("tryAcquire of a busy lock").isLessThan(bound + slack);
            assertThat(check).as("checkValid").isLessThan(bound + slack);
            assertThat(acquire).as("acquire(1 s)").isLessThan(1000 + bound + slack);
            assertThat(release).as("release").isLessThan(bound + slack);
            assertThat(close).as("close").isLessThan(bound + slack);
            a.proxy().heal();
            busy.close();
        }
    }
}
