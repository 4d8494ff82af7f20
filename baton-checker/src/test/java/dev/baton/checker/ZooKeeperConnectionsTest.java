package dev.baton.checker;

import org.junit.jupiter.api.Test;

import javax.management.InstanceNotFoundException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import java.lang.reflect.Proxy;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server's connection beans, read through JMX while other clients of a shared server come and go: a connection
 * that closes between the listing and the reading of its attributes (its bean gone: InstanceNotFoundException) has
 * no session left to count or kill, and must not make the whole reading fail (it failed
 * {@code ZooKeeperCheckBackendIT.aSessionOpenedAfterTheMarkIsNotAStoppedWorkers} on a machine shared with other
 * test runs).
 */
class ZooKeeperConnectionsTest {
    @Test
    void aConnectionThatClosesWhileItIsReadIsSkipped() throws Exception {
        ObjectName gone = new ObjectName("org.apache.ZooKeeperService:name0=StandaloneServer_port2181,"
                + "name1=Connections,name2=127.0.0.1,name3=0x100");
        ObjectName live = new ObjectName("org.apache.ZooKeeperService:name0=StandaloneServer_port2181,"
                + "name1=Connections,name2=127.0.0.1,name3=0x101");
        MBeanServerConnection server = (MBeanServerConnection) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {MBeanServerConnection.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "queryNames":
                            return new LinkedHashSet<>(List.of(gone, live));
                        case "getAttribute":
                            if (args[0].equals(gone)) {
                                throw new InstanceNotFoundException(gone.toString());
                            }
                            return args[1].equals("SourceIP") ? "127.0.0.1:40001" : "0x101";
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });
        List<ZooKeeperStrategy.Connection> seen = ZooKeeperStrategy.connections(server);
        assertThat(seen).extracting(ZooKeeperStrategy.Connection::port, ZooKeeperStrategy.Connection::session)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(40001, 0x101L));
        assertThat(Set.copyOf(seen)).hasSize(1);
    }
}
