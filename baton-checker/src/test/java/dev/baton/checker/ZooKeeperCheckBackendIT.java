package dev.baton.checker;

import dev.baton.faultproxy.FaultProxy;
import dev.baton.testkit.TestServers;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The controller's view of ZooKeeper ({@link ZooKeeperStrategy}): a session is found by its connection's client port in
 * the server's JMX and ended with {@code ConnectionMXBean.terminateSession}; the orphan count of check (d) sees only
 * sessions opened before the mark.
 */
class ZooKeeperCheckBackendIT {
    static final String URL = "zookeeper://127.0.0.1:2181";

    @BeforeEach
    void zooKeeperIsUp() {
        TestServers.requireZooKeeper();
    }

    /** A Curator session through a proxy of its own, so its client port on the server is the proxy's upstream port. */
    private record Session(FaultProxy proxy, CuratorFramework curator) implements AutoCloseable {
        int port() {
            return proxy.upstreamPorts().iterator().next();
        }

        @Override
        public void close() {
            curator.close();
            proxy.close();
        }
    }

    private static Session session() throws Exception {
        FaultProxy proxy = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT);
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString("127.0.0.1:" + proxy.port())
                .sessionTimeoutMs(10_000).retryPolicy(new RetryOneTime(100)).build();
        c.start();
        assertThat(c.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        return new Session(proxy, c);
    }

    @Test
    void killSessionsEndsExactlyTheSessionsOfThosePortsOnTheServer() throws Exception {
        try (CheckBackend backend = new ZooKeeperStrategy().open(URL, "baton_check_zk_kill_it", Duration.ofSeconds(2));
             Session victim = session(); Session bystander = session()) {
            assertThat(backend.sessionKillUnsupported()).isEmpty();
            CompletableFuture<ConnectionState> lost = new CompletableFuture<>();
            victim.curator().getConnectionStateListenable().addListener((c, s) -> {
                if (s == ConnectionState.LOST) {
                    lost.complete(s);
                }
            });
            long victimSession = victim.curator().getZookeeperClient().getZooKeeper().getSessionId();
            assertThat(backend.killSessions(Set.of(victim.port()))).isEqualTo(1);
            assertThat(lost.get(15, TimeUnit.SECONDS)).as("the victim's session ended on the server").isNotNull();
            assertThat(bystander.curator().getZookeeperClient().isConnected()).isTrue();
            assertThat(bystander.curator().checkExists().forPath("/")).isNotNull();
            assertThat(victim.curator().getZookeeperClient().getZooKeeper().getSessionId()).isNotEqualTo(victimSession);
        }
    }

    @Test
    void aSessionOpenedAfterTheMarkIsNotAStoppedWorkers() throws Exception {
        try (CheckBackend backend = new ZooKeeperStrategy().open(URL, "baton_check_zk_mark_it", Duration.ofSeconds(2));
             Session before = session()) {
            long mark = backend.sessionMark();
            try (Session after = session()) {
                Set<Integer> ports = Set.of(before.port(), after.port());
                assertThat(backend.countSessions(ports, mark)).as("sessions from those ports opened before the mark")
                        .isEqualTo(1);
                assertThat(backend.countSessions(ports, Long.MAX_VALUE)).isEqualTo(2);
            }
        }
    }

    /**
     * As on Redis (the standard profile's Redis × restart, and CI's {@code RestartIT} on ZooKeeper: "(d) 1 server
     * session(s) of stopped workers remain"): after a restart fault the controller's own sessions reconnect, perhaps
     * from a port a worker's proxy used before, with session ids below the mark. They are never counted.
     */
    @Test
    void theControllersOwnSessionsAreNeverAStoppedWorkersWhateverTheirPorts() throws Exception {
        try (CheckBackend backend = new ZooKeeperStrategy().open(URL, "baton_check_zk_own_it", Duration.ofSeconds(2))) {
            backend.client().lock("touch").tryAcquire().ifPresent(dev.baton.Lease::close);
            Set<Integer> ports = new java.util.HashSet<>();
            try (javax.management.remote.JMXConnector c = javax.management.remote.JMXConnectorFactory.connect(
                    new javax.management.remote.JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:"
                            + ListeningProcess.of(2181).flatMap(ListeningProcess::jmxPort).orElseThrow()
                            + "/jmxrmi"))) {
                var server = c.getMBeanServerConnection();
                for (var n : server.queryNames(new javax.management.ObjectName(
                        "org.apache.ZooKeeperService:name1=Connections,*"), null)) {
                    if (n.getKeyProperty("name3") != null) {
                        String source = String.valueOf(server.getAttribute(n, "SourceIP"));
                        ports.add(Integer.parseInt(source.substring(source.lastIndexOf(':') + 1)));
                    }
                }
            }
            assertThat(ports).as("every client connection on the server, the controller's two among them")
                    .hasSizeGreaterThanOrEqualTo(2);
            assertThat(backend.countSessions(ports, Long.MAX_VALUE)).as("all but the controller's own")
                    .isLessThanOrEqualTo(ports.size() - 2);
        }
    }
}
