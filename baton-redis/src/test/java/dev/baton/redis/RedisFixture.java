package dev.baton.redis;

import dev.baton.LockClient;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.LockFixture;
import dev.baton.faultproxy.FaultProxy;
import dev.baton.testkit.TestServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tests' Redis at 127.0.0.1:6379. Each client reaches it through its own {@link FaultProxy} (so a test can cut
 * its network path), and its connections are named {@code baton:<client id>} (so a test can find and kill them
 * with {@code CLIENT LIST} / {@code CLIENT KILL}).
 */
public class RedisFixture implements LockFixture {
    static final String PREFIX = "baton-test:";
    private final Map<String, FaultProxy> proxies = new ConcurrentHashMap<>();
    private final List<LockClient> clients = new ArrayList<>();
    private final RedisClient admin;
    private final StatefulRedisConnection<String, String> adminConnection;

    private final String host;
    private final int port;

    /** The tests' shared Redis of {@link TestServers#START_SCRIPT}. */
    public RedisFixture() {
        this(TestServers.REDIS_HOST, TestServers.REDIS_PORT);
        TestServers.requireRedis();
    }

    /** A Redis at host:port (a test's own server). */
    RedisFixture(String host, int port) {
        this.host = host;
        this.port = port;
        admin = RedisClient.create(RedisURI.create(host, port));
        adminConnection = admin.connect();
    }

    String host() {
        return host;
    }

    int port() {
        return port;
    }

    @Override
    public String name() {
        return "redis";
    }

    RedisCommands<String, String> admin() {
        return adminConnection.sync();
    }

    @Override
    public LockClient newClient(ClientConfig config) {
        FaultProxy proxy = new FaultProxy(host, port);
        try {
            LockClient c = RedisLocks.builder(RedisURI.create("redis://127.0.0.1:" + proxy.port()))
                    .keyPrefix(PREFIX)
                    .commandTimeout(Duration.ofSeconds(2))
                    .leaseTime(config.leaseTime())
                    .maxPollInterval(config.maxPollInterval())
                    .minPollInterval(Duration.ofMillis(Math.min(10, config.maxPollInterval().toMillis())))
                    .build();
            proxies.put(c.clientId(), proxy);
            synchronized (clients) {
                clients.add(c);
            }
            return c;
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }

    /** The ids of the client's connections on the server, from {@code CLIENT LIST}. */
    List<String> connectionIds(LockClient client) {
        String name = "name=" + RedisLockBackend.connectionName(client.clientId()) + " ";
        List<String> ids = new ArrayList<>();
        for (String line : admin().clientList().split("\n")) {
            if (line.contains(name)) {
                for (String field : line.split(" ")) {
                    if (field.startsWith("id=")) {
                        ids.add(field.substring(3));
                    }
                }
            }
        }
        return ids;
    }

    @Override
    public void killServerSessions(LockClient client) {
        for (String id : connectionIds(client)) {
            admin().clientKill(io.lettuce.core.KillArgs.Builder.id(Long.parseLong(id)));
        }
    }

    @Override
    public AutoCloseable cutOff(LockClient client) {
        FaultProxy proxy = proxies.get(client.clientId());
        proxy.fault(FaultProxy.Mode.BLACKHOLE);
        return proxy::heal;
    }

    /** The client's own proxy, for faults other than a cut. */
    FaultProxy proxy(LockClient client) {
        return proxies.get(client.clientId());
    }

    @Override
    public int serverSessions(LockClient client) {
        return connectionIds(client).size();
    }

    @Override
    public void expireOnServer(String lockName) {
        RedisKeys.Lock k = RedisKeys.Lock.of(PREFIX, lockName);
        if (admin().del(k.exclusive(), k.writer()) == 0) {
            throw new IllegalStateException("no grant for lock '" + lockName + "'");
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
        proxies.values().forEach(FaultProxy::close);
        adminConnection.close();
        admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
