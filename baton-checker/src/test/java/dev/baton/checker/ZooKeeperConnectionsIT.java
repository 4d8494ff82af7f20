package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The server's connection beans, read through JMX while other clients of a shared server come and go: a connection
 * that closes between the listing and the reading of its attributes (its bean gone: InstanceNotFoundException) has
 * no session left to count or kill, and must not make the whole reading fail (it failed
 * {@code ZooKeeperCheckBackendIT.aSessionOpenedAfterTheMarkIsNotAStoppedWorkers} on a machine shared with other
 * test runs). On the ZooKeeper of {@code scripts/start-servers.sh}, read only: the test closes a client of its own
 * between the real listing and the real reads.
 */
class ZooKeeperConnectionsIT {
    @Test
    void aConnectionThatClosesWhileItIsReadIsSkipped() throws Exception {
        TestServers.requireZooKeeper();
        int jmxPort = ListeningProcess.of(TestServers.ZOOKEEPER_PORT).orElseThrow().jmxPort().orElseThrow();
        try (CuratorFramework staying = client(); CuratorFramework closing = client();
             JMXConnector jmx = JMXConnectorFactory.connect(new JMXServiceURL(
                     "service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPort + "/jmxrmi"))) {
            long stayingSession = staying.getZookeeperClient().getZooKeeper().getSessionId();
            long closingSession = closing.getZookeeperClient().getZooKeeper().getSessionId();
            MBeanServerConnection real = jmx.getMBeanServerConnection();
            AtomicReference<ObjectName> closed = new AtomicReference<>();
            // the real server, but right after the listing the closing client's connection ends (its bean is gone)
            MBeanServerConnection closesAfterListing = (MBeanServerConnection) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {MBeanServerConnection.class},
                    (proxy, method, args) -> {
                        Object result;
                        try {
                            result = method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                        if (method.getName().equals("queryNames") && closed.get() == null) {
                            ObjectName bean = beanOf(real, (Set<?>) result, closingSession);
                            closed.set(bean);
                            closing.close();
                            await("the closed client's connection bean is gone").atMost(Duration.ofSeconds(10))
                                    .until(() -> !real.isRegistered(bean));
                        }
                        return result;
                    });

            List<ZooKeeperStrategy.Connection> seen = ZooKeeperStrategy.connections(closesAfterListing);

            assertThat(closed.get()).as("the listing held the closing client's connection").isNotNull();
            assertThat(seen).extracting(ZooKeeperStrategy.Connection::session)
                    .contains(stayingSession).doesNotContain(closingSession);
        }
    }

    private static CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(TestServers.ZOOKEEPER_HOST + ":" + TestServers.ZOOKEEPER_PORT)
                .retryPolicy(new RetryOneTime(100)).build();
        c.start();
        assertThat(c.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)).as("connected").isTrue();
        return c;
    }

    /** The bean, among {@code names}, of the connection of session {@code session}. */
    private static ObjectName beanOf(MBeanServerConnection server, Set<?> names, long session) throws Exception {
        String id = "0x" + Long.toHexString(session);
        for (Object o : names) {
            ObjectName n = (ObjectName) o;
            if (n.getKeyProperty("name3") != null && id.equals(String.valueOf(server.getAttribute(n, "SessionId")))) {
                return n;
            }
        }
        throw new AssertionError("no connection bean of session " + id + " among " + names);
    }
}
