package dev.baton.zookeeper;

import dev.baton.LockClient;
import dev.baton.faultproxy.FaultProxy;
import dev.baton.spi.LockMode;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.TestServers;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tests' ZooKeeper at 127.0.0.1:2181. Each client has its own {@link CuratorFramework} that reaches the server
 * through its own {@link FaultProxy} (so a test can cut its network path), built with a session timeout equal to
 * the client's lease time (at least the server's minimum, 1 s), handed to {@link ZooKeeperLocks#builder(CuratorFramework)}
 * and closed by the fixture. Holding the framework lets the fixture end the client's session on the server: it
 * attaches a second handle to the same session (id and password) and closes it, which is a real server-side
 * session close — every ephemeral node of it is deleted at once and the client's next connection learns that its
 * session expired.
 */
public class ZooKeeperFixture implements LockFixture {
    static final String ROOT = "/baton-test/contract";
    static final String DIRECT = TestServers.ZOOKEEPER_HOST + ":" + TestServers.ZOOKEEPER_PORT;
    private final Map<String, FaultProxy> proxies = new ConcurrentHashMap<>();
    private final Map<String, CuratorFramework> curators = new ConcurrentHashMap<>();
    private final List<LockClient> clients = new ArrayList<>();
    private final List<CuratorFramework> frameworks = new ArrayList<>();
    private final CuratorFramework admin;

    public ZooKeeperFixture() {
        TestServers.requireZooKeeper();
        admin = CuratorFrameworkFactory.newClient(DIRECT, 10_000, 5_000, new BoundedExponentialBackoffRetry(50, 500, 5));
        admin.start();
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    /** A Curator client on the server without a proxy, for what tests look at or change behind a client's back. */
    CuratorFramework admin() {
        return admin;
    }

    /** The root of this fixture's locks. */
    String root() {
        return ROOT;
    }

    @Override
    public LockClient newClient(ClientConfig config) {
        FaultProxy proxy = new FaultProxy(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT);
        int sessionMs = (int) Math.max(1000, config.leaseTime().toMillis());
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + proxy.port())
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(5000)
                .retryPolicy(new BoundedExponentialBackoffRetry(50, 500, 3))
                .build();
        curator.start();
        synchronized (frameworks) {
            frameworks.add(curator);
        }
        try {
            LockClient c = ZooKeeperLocks.builder(curator)
                    .rootPath(ROOT)
                    .leaseTime(config.leaseTime())
                    .maxPollInterval(config.maxPollInterval())
                    .minPollInterval(Duration.ofMillis(Math.min(10, config.maxPollInterval().toMillis())))
                    .build();
            proxies.put(c.clientId(), proxy);
            curators.put(c.clientId(), curator);
            synchronized (clients) {
                clients.add(c);
            }
            return c;
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }

    /** The Curator client under a lock client made here. */
    CuratorFramework curatorOf(LockClient client) {
        return curators.get(client.clientId());
    }

    /** The fault proxy on a lock client's path to the server. */
    FaultProxy proxyOf(LockClient client) {
        return proxies.get(client.clientId());
    }

    /** Ends the client's current session on the server: a second handle attaches to it and closes it. */
    @Override
    public void killServerSessions(LockClient client) {
        try {
            ZooKeeper zk = curatorOf(client).getZookeeperClient().getZooKeeper();
            expireSession(zk.getSessionId(), zk.getSessionPasswd());
        } catch (Exception e) {
            throw new IllegalStateException("could not end the session of " + client.clientId(), e);
        }
    }

    /** Attaches a handle to the session and closes it: the server closes the session and deletes its nodes. */
    static void expireSession(long sessionId, byte[] password) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper other = new ZooKeeper(DIRECT, 10_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, sessionId, password);
        try {
            if (!connected.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not attach to session 0x" + Long.toHexString(sessionId));
            }
        } finally {
            other.close(5000);
        }
    }

    @Override
    public AutoCloseable cutOff(LockClient client) {
        FaultProxy proxy = proxyOf(client);
        proxy.fault(FaultProxy.Mode.BLACKHOLE);
        return proxy::heal;
    }

    /** The client's connections as the server lists them ({@code cons}), matched by the proxy's upstream ports. */
    @Override
    public int serverSessions(LockClient client) {
        Set<Integer> ports = proxyOf(client).upstreamPorts();
        Matcher m = Pattern.compile("/127\\.0\\.0\\.1:(\\d+)\\[").matcher(fourLetterWord("cons"));
        int n = 0;
        while (m.find()) {
            if (ports.contains(Integer.parseInt(m.group(1)))) {
                n++;
            }
        }
        return n;
    }

    /** Sends a four-letter word to the server and returns its whole answer. */
    static String fourLetterWord(String word) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(TestServers.ZOOKEEPER_HOST, TestServers.ZOOKEEPER_PORT), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            in.transferTo(buf);
            return buf.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("four-letter word " + word + " failed", e);
        }
    }

    /** Deletes the holder's node (the head of the lock's exclusive line, else of its read-write line). */
    @Override
    public void expireOnServer(String lockName) {
        String parent = ROOT + "/" + ZooKeeperNames.encode(lockName);
        try {
            List<ZooKeeperNames.Member> members = new ArrayList<>();
            for (String child : admin.getChildren().forPath(parent)) {
                ZooKeeperNames.member(child).ifPresent(members::add);
            }
            Optional<ZooKeeperNames.Member> head = members.stream()
                    .filter(m -> m.mode() == LockMode.EXCLUSIVE)
                    .min(Comparator.comparingLong(ZooKeeperNames.Member::sequence))
                    .or(() -> members.stream().min(Comparator.comparingLong(ZooKeeperNames.Member::sequence)));
            if (head.isEmpty()) {
                throw new IllegalStateException("no grant for lock '" + lockName + "'");
            }
            admin.delete().forPath(parent + "/" + head.get().node());
        } catch (KeeperException.NoNodeException e) {
            throw new IllegalStateException("no grant for lock '" + lockName + "'", e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("could not delete the holder of '" + lockName + "'", e);
        }
    }

    @Override
    public boolean notifiesWaiters() {
        return true;
    }

    @Override
    public void close() {
        List<LockClient> all;
        synchronized (clients) {
            all = List.copyOf(clients);
            clients.clear();
        }
        for (LockClient c : all) {
            try {
                c.close();
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
        synchronized (frameworks) {
            frameworks.forEach(CuratorFramework::close);
            frameworks.clear();
        }
        proxies.values().forEach(FaultProxy::close);
        admin.close();
    }
}
