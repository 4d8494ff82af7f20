package dev.baton.checker;

import dev.baton.LockClient;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.zookeeper.ZooKeeperLockClient;
import dev.baton.zookeeper.ZooKeeperLocks;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Baton's ZooKeeper locks ({@link ZooKeeperLocks}) on {@code zookeeper://host[:port][/chroot]} URLs (one server: the
 * checker puts its fault proxy in front of it): {@code --strategy zookeeper}, or the default strategy given a
 * {@code zookeeper://} URL.
 *
 * <p>The checker's {@code --table} becomes the root znode ({@code baton_check} → {@code /baton_check}), deleted with
 * everything under it when a scenario starts. Every client's session timeout is the lease time under test (the
 * server negotiates it within its {@code minSessionTimeout}..{@code maxSessionTimeout}, 1–60 s as
 * {@code scripts/start-servers.sh} configures it). A hold is a member node that lives as long as its session, so the
 * liveness bound is the session timeout plus one server tick ({@value #TICK_MS} ms: the server checks expiry once a
 * tick) plus the waiter's longest poll (a waiter is woken by the watch on its predecessor at once).
 *
 * <p>Faults, and when a hand-over is owed (check (c)):
 * <ul>
 *   <li>{@code kill}, {@code pause}, {@code partition} blackhole and reset: from the fault's start — the server hears
 *       no heartbeat and expires the session, deleting its node;</li>
 *   <li>{@code partition} drop-responses: from its end — heartbeats still reach the server, so the session (and the
 *       lock) lives; the holder's client, hearing nothing, is SUSPENDED (its leases uncertain, {@code isValid()}
 *       false) until the path heals;</li>
 *   <li>{@code session-kill}: from its start — the server's own {@code ConnectionMXBean.terminateSession} (over JMX,
 *       at the port its command line opens, {@code -Dcom.sun.management.jmxremote.port}) ends the holder's
 *       session and deletes its nodes at once; the holder hears it (LOST) a moment later, so beliefs may overlap:
 *       reported as information, the token protects the resource;</li>
 *   <li>{@code restart}: from its end — sessions are kept in the server's data directory and survive the restart.</li>
 * </ul>
 */
public class ZooKeeperStrategy implements CheckStrategy {
    private static final Pattern URL = Pattern.compile("(?i)(zookeeper://)([^/:,@]+|\\[[^]]+])(?::(\\d+))?(/[^,]*)?");
    /** An ensemble: {@code zookeeper://host[:port],host[:port][,…][/chroot]}. */
    private static final Pattern ENSEMBLE_URL = Pattern.compile("(?i)zookeeper://((?:[^/:,@]+(?::\\d+)?)"
            + "(?:,[^/:,@]+(?::\\d+)?)+)(/[^,]*)?");
    static final int DEFAULT_PORT = 2181;
    /** The server's tick ({@code tickTime}), as {@code scripts/start-servers.sh} configures it. */
    static final long TICK_MS = 1000;

    @Override
    public String name() {
        return "zookeeper";
    }

    /** Whether a URL is a ZooKeeper one. */
    static boolean isZooKeeper(String url) {
        return url.toLowerCase(Locale.ROOT).startsWith("zookeeper://");
    }

    @Override
    public void validate(String url) {
        if (!isZooKeeper(url) || !(URL.matcher(url).matches() || ENSEMBLE_URL.matcher(url).matches())) {
            throw new IllegalArgumentException("--url: strategy 'zookeeper' runs on zookeeper://host[:port][/chroot]"
                    + " URLs (one server, which the checker puts its fault proxy in front of) or"
                    + " zookeeper://host:port,host:port[,…][/chroot] (an ensemble), not '" + url + "'");
        }
    }

    /** The root znode for the checker's table name. */
    static String root(String table) {
        return "/" + table.replaceAll("[^A-Za-z0-9_.\\-]", "_");
    }

    /** The connect string of a (validated) URL: {@code host:port[,host:port…][/chroot]}. */
    static String connectString(String url) {
        Matcher e = ENSEMBLE_URL.matcher(url);
        if (e.matches()) {
            return e.group(1) + (e.group(2) != null ? e.group(2) : "");
        }
        Matcher m = URL.matcher(url);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a zookeeper:// URL: " + url);
        }
        return m.group(2) + ":" + (m.group(3) != null ? m.group(3) : DEFAULT_PORT) + (m.group(4) != null ? m.group(4) : "");
    }

    @Override
    public CheckBackend open(String url, String table, Duration leaseTime) {
        validate(url);
        String root = root(table);
        CuratorFramework admin = controllerClient(url, 30_000);
        CuratorFramework probe = null;
        try {
            awaitConnected(admin, url);
            // the checker's own root: start every scenario with no nodes, so no earlier run's members linger
            try {
                admin.delete().deletingChildrenIfNeeded().forPath(root);
            } catch (KeeperException.NoNodeException e) {
                // nothing to clean
            }
            // the lock client on a Curator client of the controller's own, so that check (d) knows its session: after a
            // restart fault it reconnects on the same session, perhaps from a port a worker's proxy used before
            probe = controllerClient(url, (int) leaseTime.toMillis());
            awaitConnected(probe, url);
            ZooKeeperLockClient client = ZooKeeperLocks.builder(probe).rootPath(root).leaseTime(leaseTime)
                    .clientIdPrefix("checker").build();
            return new Backend(url, root, admin, probe, client);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(probe, admin);
            throw new IllegalStateException("interrupted while preparing " + url, e);
        } catch (RuntimeException e) {
            closeQuietly(probe, admin);
            throw e;
        } catch (Exception e) {
            closeQuietly(probe, admin);
            throw new IllegalStateException("cannot prepare ZooKeeper at " + url + ": " + e.getMessage(), e);
        }
    }

    /** A started Curator client of the controller's own; {@link #awaitConnected} tells when it is connected. */
    private static CuratorFramework controllerClient(String url, int sessionTimeoutMs) {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connectString(url))
                .sessionTimeoutMs(sessionTimeoutMs).connectionTimeoutMs(10_000)
                .retryPolicy(new BoundedExponentialBackoffRetry(50, 1000, 3)).build();
        c.start();
        return c;
    }

    private static void awaitConnected(CuratorFramework c, String url) throws InterruptedException {
        if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("cannot connect to ZooKeeper at " + url + " within 10 s");
        }
    }

    private static void closeQuietly(CuratorFramework... clients) {
        for (CuratorFramework c : clients) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Override
    public LockClient newClient(String url, String table, Duration leaseTime, String identity) {
        validate(url);
        Duration connect = leaseTime.multipliedBy(2).compareTo(Duration.ofSeconds(2)) >= 0
                ? leaseTime.multipliedBy(2) : Duration.ofSeconds(2);
        return ZooKeeperLocks.builder(connectString(url)).rootPath(root(table)).sessionTimeout(leaseTime)
                .leaseTime(leaseTime).connectionTimeout(connect).clientIdPrefix(identity).build();
    }

    @Override
    public Duration handOverBound(Duration leaseTime) {
        return leaseTime.plusMillis(TICK_MS).plus(AbstractClientBuilder.DEFAULT_MAX_POLL);
    }

    @Override
    public HandOver handOver(String fault, String mode, Duration leaseTime) {
        Duration bound = handOverBound(leaseTime);
        return switch (fault) {
            case "kill" -> HandOver.fromFaultStart(bound, "the server expires a dead client's session within its"
                    + " timeout (+ a tick) and deletes its node; the next waiter's watch fires");
            case "pause" -> HandOver.fromFaultStart(bound, "a paused client sends no heartbeat: its session expires");
            case "session-kill" -> HandOver.fromFaultStart(AbstractClientBuilder.DEFAULT_MAX_POLL, "terminateSession"
                    + " deletes the session's nodes at once; the next waiter's watch fires");
            case "restart" -> HandOver.fromFaultEnd(bound, "sessions are kept on disk and survive a restart: once the"
                    + " server is back the holder carries on and releases");
            case "partition" -> mode.equals("drop-responses")
                    ? HandOver.fromFaultEnd(bound, "heartbeats still reach the server: the session and its lock live")
                    : HandOver.fromFaultStart(bound, "a cut-off client's session expires");
            default -> HandOver.none("no fault");
        };
    }

    /** A client connection as the server's JMX shows it: its bean, client port and session id. */
    record Connection(ObjectName bean, int port, long session) {
    }

    /**
     * The server's client connections now; one that closes while they are read (a shared server's other clients come
     * and go) is left out, as it has no session left.
     */
    static List<Connection> connections(MBeanServerConnection server) throws Exception {
        List<Connection> out = new ArrayList<>();
        for (ObjectName n : server.queryNames(new ObjectName("org.apache.ZooKeeperService:name1=Connections,*"),
                null)) {
            if (n.getKeyProperty("name3") == null) {
                continue;
            }
            String source;
            String session;
            try {
                source = String.valueOf(server.getAttribute(n, "SourceIP"));
                session = String.valueOf(server.getAttribute(n, "SessionId"));
            } catch (javax.management.InstanceNotFoundException e) {
                continue; // the connection closed after the listing: no session of it is left
            }
            int colon = source.lastIndexOf(':');
            if (colon < 0 || !session.startsWith("0x")) {
                continue;
            }
            out.add(new Connection(n, Integer.parseInt(source.substring(colon + 1)),
                    Long.parseUnsignedLong(session.substring(2), 16)));
        }
        return out;
    }

    /** The controller's view: its own lock client, and the server's JMX for its connections and sessions. */
    private static final class Backend implements CheckBackend {
        private final String url;
        private final String root;
        private final CuratorFramework admin;
        /** The Curator client under {@link #client} (the probe's locks), closed after it. */
        private final CuratorFramework probe;
        private final ZooKeeperLockClient client;
        /** The server's JMX port, once found. */
        private volatile Integer jmxPort;

        Backend(String url, String root, CuratorFramework admin, CuratorFramework probe, ZooKeeperLockClient client) {
            this.url = url;
            this.root = root;
            this.admin = admin;
            this.probe = probe;
            this.client = client;
        }

        /** The sessions of the controller's own Curator clients (they keep their ids across reconnects). */
        private Set<Long> ownSessions() {
            Set<Long> out = new java.util.HashSet<>();
            for (CuratorFramework c : List.of(admin, probe)) {
                try {
                    out.add(c.getZookeeperClient().getZooKeeper().getSessionId());
                } catch (Exception e) {
                    // not connected now: no connection of it to mistake for a worker's either
                }
            }
            return out;
        }

        @Override
        public String description() {
            return client.backend();
        }

        @Override
        public String shortName() {
            return "zookeeper";
        }

        @Override
        public LockClient client() {
            return client;
        }

        @Override
        public Optional<InetSocketAddress> serverAddress() {
            Matcher m = URL.matcher(url);
            if (!m.matches()) {
                return Optional.empty();
            }
            return Optional.of(new InetSocketAddress(m.group(2).replace("[", "").replace("]", ""),
                    m.group(3) != null ? Integer.parseInt(m.group(3)) : DEFAULT_PORT));
        }

        @Override
        public String urlThroughProxy(int proxyPort) {
            Matcher m = URL.matcher(url);
            if (!m.matches()) {
                throw new IllegalStateException("cannot route " + url + " through a proxy");
            }
            return m.group(1) + "127.0.0.1:" + proxyPort + (m.group(4) != null ? m.group(4) : "");
        }

        @Override
        public Optional<String> sessionKillUnsupported() {
            try (JMXConnector c = jmx()) {
                c.getMBeanServerConnection().getMBeanCount();
                return Optional.empty();
            } catch (IOException e) {
                return Optional.of(e.getMessage() + ": the checker ends a ZooKeeper session through the server's"
                        + " ConnectionMXBean, over the JMX port its command line opens"
                        + " (-Dcom.sun.management.jmxremote.port, as scripts/start-servers.sh starts it)");
            }
        }

        /**
         * The JMX port of the server of the URL: the one its command line opens. Found once; the server keeps it
         * across a restart fault (the same command line).
         */
        private int jmxPort() throws IOException {
            Integer port = jmxPort;
            if (port == null) {
                InetSocketAddress server = serverAddress().orElseThrow(() -> new IOException("no host:port in the URL"));
                if (!server.getAddress().isLoopbackAddress()) {
                    throw new IOException("the server " + server + " is not on this host");
                }
                ListeningProcess p = ListeningProcess.of(server.getPort()).orElseThrow(() -> new IOException("no process"
                        + " of this host that this user can see listens on port " + server.getPort()));
                port = p.jmxPort().orElseThrow(() -> new IOException("the ZooKeeper server on port " + server.getPort()
                        + " (pid " + p.handle().pid() + ") opens no JMX port"));
                jmxPort = port;
            }
            return port;
        }

        private JMXConnector jmx() throws IOException {
            int port = jmxPort();
            try {
                return JMXConnectorFactory.connect(new JMXServiceURL(
                        "service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi"));
            } catch (IOException e) {
                throw new IOException("no JMX at 127.0.0.1:" + port + " (" + e.getMessage() + ")", e);
            }
        }

        @Override
        public int killSessions(Set<Integer> clientPorts) {
            int killed = 0;
            try (JMXConnector c = jmx()) {
                MBeanServerConnection server = c.getMBeanServerConnection();
                for (Connection conn : connections(server)) {
                    if (clientPorts.contains(conn.port())) {
                        try {
                            server.invoke(conn.bean(), "terminateSession", new Object[0], new String[0]);
                            killed++;
                        } catch (javax.management.InstanceNotFoundException e) {
                            // it ended on its own meanwhile
                        }
                    }
                }
            } catch (Exception e) {
                throw new IllegalStateException("cannot end sessions on ZooKeeper through its JMX: " + e, e);
            }
            return killed;
        }

        @Override
        public long sessionMark() {
            // session ids only grow on a server (they start from its clock at start-up): every session that exists now
            // has a smaller id, every later one a larger
            try (JMXConnector c = jmx()) {
                return connections(c.getMBeanServerConnection()).stream().mapToLong(Connection::session)
                        .max().orElse(0) + 1;
            } catch (Exception e) {
                throw new IllegalStateException("cannot read ZooKeeper's sessions through JMX: " + e, e);
            }
        }

        @Override
        public int countSessions(Set<Integer> clientPorts, long mark) {
            Set<Long> own = ownSessions();
            try (JMXConnector c = jmx()) {
                return (int) connections(c.getMBeanServerConnection()).stream()
                        .filter(conn -> clientPorts.contains(conn.port()) && conn.session() < mark
                                && !own.contains(conn.session())).count();
            } catch (Exception e) {
                throw new IllegalStateException("cannot read ZooKeeper's sessions through JMX: " + e, e);
            }
        }

        @Override
        public void close() {
            try {
                client.close();
            } finally {
                closeQuietly(probe, admin);
            }
        }

        @Override
        public String toString() {
            return description() + " " + root;
        }
    }
}
