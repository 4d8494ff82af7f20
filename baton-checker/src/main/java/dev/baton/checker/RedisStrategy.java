package dev.baton.checker;

import dev.baton.LockClient;
import dev.baton.redis.RedisLockClient;
import dev.baton.redis.RedisLocks;
import dev.baton.spi.AbstractClientBuilder;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Baton's Redis locks ({@link RedisLocks}) on {@code redis://host[:port][/db]} URLs: {@code --strategy redis}, or
 * the default strategy given a {@code redis://} URL.
 *
 * <p>The checker's {@code --table} becomes the key prefix ({@code baton_check} → {@code baton_check:}), and every
 * key under it is deleted when a scenario starts (a missing token counter is seeded from the server's clock, so
 * tokens still only grow). Who holds a lock is the owner written in the grant, whose client id prefix is the
 * worker's identity.
 *
 * <p>Faults, and when a hand-over is owed (check (c)), each within the lease plus the waiter's longest poll (a
 * waiter is woken by the release's message, or retries when the holder's {@code PTTL} ends) plus the margin:
 * <ul>
 *   <li>{@code kill}, {@code pause}, {@code partition}: a lease, from the fault's start (from its end for
 *       {@code drop-responses}, whose renewals still reach the server);</li>
 *   <li>{@code session-kill}: {@code CLIENT KILL ID} of the holder's connections (found by their client port, the
 *       upstream side of the worker's proxy). A lease outlives its connections: no hand-over is owed; the client
 *       reconnects and renews;</li>
 *   <li>{@code restart}: {@link ServerRestart} stops the local Redis ({@code SHUTDOWN NOSAVE}) and starts it as
 *       {@code scripts/start-servers.sh} does, without persistence: every key is lost, so a restart is a failover
 *       to an empty server. Holders learn at their next renewal that their grant is gone, and waiters may be granted
 *       before that: overlapping beliefs across a restart are reported as information, and the fencing token (seeded
 *       from the server's clock) is what keeps the resource safe. A hand-over is owed from the restart's end.</li>
 * </ul>
 */
public class RedisStrategy implements CheckStrategy {
    private static final Pattern URL = Pattern.compile("(?i)(rediss?://)(?:([^@/]*)@)?([^/:@]+|\\[[^]]+])(?::(\\d+))?(/.*)?");
    /** A primary behind Sentinels: {@code redis-sentinel://[password@]host[:port][,host[:port]…][/db][?…]#master}. */
    private static final Pattern SENTINEL_URL = Pattern.compile("(?i)redis-sentinel://(?:[^@/]*@)?[^/?#@]+(/[^#]*)?#.+");
    static final int DEFAULT_PORT = 6379;
    /** The client id prefix of the controller's own lock client (its connections are {@code baton:checker/…}). */
    static final String CONTROLLER_PREFIX = "checker";
    /** The name of the controller's admin connection ({@code CLIENT LIST}, {@code CLIENT KILL}). */
    static final String CONTROLLER_NAME = "baton-check:controller";

    @Override
    public String name() {
        return "redis";
    }

    /** Whether a URL is a Redis one ({@code redis://}, {@code rediss://}, {@code redis-sentinel://}). */
    static boolean isRedis(String url) {
        String lower = url.toLowerCase(Locale.ROOT);
        return lower.startsWith("redis://") || lower.startsWith("rediss://") || isSentinel(url);
    }

    /** Whether a URL names a primary through its Sentinels. */
    static boolean isSentinel(String url) {
        return url.toLowerCase(Locale.ROOT).startsWith("redis-sentinel://");
    }

    @Override
    public void validate(String url) {
        if (!isRedis(url) || !(isSentinel(url) ? SENTINEL_URL : URL).matcher(url).matches()) {
            throw new IllegalArgumentException("--url: strategy 'redis' runs on redis://[user:password@]host[:port][/db]"
                    + " or redis-sentinel://host[:port][,host[:port]…][/db]#master URLs, not '" + url + "'");
        }
    }

    /** The key prefix for the checker's table name: letters, digits and {@code _ . : -} are kept, then a colon. */
    static String prefix(String table) {
        return table.replaceAll("[^A-Za-z0-9_.:\\-]", "_") + ":";
    }

    @Override
    public CheckBackend open(String url, String table, Duration leaseTime) {
        validate(url);
        String prefix = prefix(table);
        // named in the URI, which Lettuce sends again on every reconnect (a CLIENT SETNAME is not replayed): the
        // controller's connections keep their name across a restart fault, so check (d) never counts them
        RedisURI uri = RedisURI.create(url);
        uri.setClientName(CONTROLLER_NAME);
        RedisClient admin = RedisClient.create(uri);
        try {
            StatefulRedisConnection<String, String> connection = admin.connect();
            RedisCommands<String, String> redis = connection.sync();
            // the checker's own prefix: start every scenario with no keys, so no earlier run's grants linger
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(500));
                if (!page.getKeys().isEmpty()) {
                    redis.del(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
            RedisLockClient client = RedisLocks.builder(uri).keyPrefix(prefix).leaseTime(leaseTime)
                    .clientIdPrefix(CONTROLLER_PREFIX).build();
            return new Backend(url, prefix, admin, connection, client);
        } catch (RuntimeException e) {
            admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            throw e;
        }
    }

    @Override
    public LockClient newClient(String url, String table, Duration leaseTime, String identity) {
        validate(url);
        Duration timeout = leaseTime.multipliedBy(2).compareTo(Duration.ofSeconds(2)) >= 0
                ? leaseTime.multipliedBy(2) : Duration.ofSeconds(2);
        // RedisLocks' URL form: Baton's requireReplicas / replicaTimeout parameters apply
        return RedisLocks.builder(url).keyPrefix(prefix(table)).leaseTime(leaseTime)
                .commandTimeout(timeout).clientIdPrefix(identity).build();
    }

    @Override
    public Duration handOverBound(Duration leaseTime) {
        return leaseTime.plus(AbstractClientBuilder.DEFAULT_MAX_POLL);
    }

    /**
     * A place in line lives one second after its client's last heartbeat (every 250 ms), whatever the lease
     * ({@code RedisLockBackend.PLACE_TTL}, {@code HEARTBEAT_INTERVAL}); every script that reads the line drops dead
     * places, so the live waiter behind takes the lock at its next poll.
     */
    @Override
    public java.util.Optional<Duration> deadPlaceBound(Duration leaseTime) {
        return java.util.Optional.of(Duration.ofMillis(1000 + 250).plus(AbstractClientBuilder.DEFAULT_MAX_POLL));
    }

    @Override
    public HandOver handOver(String fault, String mode, Duration leaseTime) {
        if (fault.equals("restart")) {
            return HandOver.fromFaultEnd(handOverBound(leaseTime), "a restart without persistence loses every key:"
                    + " once the server is back, waiters take the locks (holders hear at their next renewal)");
        }
        return CheckStrategy.super.handOver(fault, mode, leaseTime);
    }

    /** The controller's view: its own lock client, and an admin connection for {@code CLIENT LIST/KILL}. */
    private static final class Backend implements CheckBackend {
        private final String url;
        private final String prefix;
        private final RedisClient admin;
        private final StatefulRedisConnection<String, String> connection;
        private final RedisLockClient client;

        Backend(String url, String prefix, RedisClient admin, StatefulRedisConnection<String, String> connection,
                RedisLockClient client) {
            this.url = url;
            this.prefix = prefix;
            this.admin = admin;
            this.connection = connection;
            this.client = client;
        }

        @Override
        public String description() {
            return client.backend() + " (prefix " + prefix + ")";
        }

        @Override
        public String shortName() {
            return "redis";
        }

        @Override
        public LockClient client() {
            return client;
        }

        @Override
        public Optional<InetSocketAddress> serverAddress() {
            if (isSentinel(url)) {
                return Optional.empty(); // the Sentinels name the primary to each client: no one server to proxy
            }
            Matcher m = URL.matcher(url);
            if (!m.matches()) {
                return Optional.empty();
            }
            String host = m.group(3).replace("[", "").replace("]", "");
            return Optional.of(new InetSocketAddress(host, m.group(4) != null ? Integer.parseInt(m.group(4))
                    : DEFAULT_PORT));
        }

        @Override
        public String urlThroughProxy(int proxyPort) {
            Matcher m = URL.matcher(url);
            if (!m.matches()) {
                throw new IllegalStateException("cannot route " + url + " through a proxy");
            }
            return m.group(1) + (m.group(2) != null ? m.group(2) + "@" : "") + "127.0.0.1:" + proxyPort
                    + (m.group(5) != null ? m.group(5) : "");
        }

        @Override
        public Optional<String> sessionKillUnsupported() {
            return Optional.empty();
        }

        /**
         * A connection as {@code CLIENT LIST} shows it: its id (ids only grow, until a restart), its client port and
         * its name.
         */
        private record Session(long id, int port, String name) {
            /** The controller's own: its admin connection and its lock client's (the probe's) connections. */
            boolean controllers() {
                return name.equals(CONTROLLER_NAME) || name.startsWith("baton:" + CONTROLLER_PREFIX + "/");
            }
        }

        private List<Session> sessions() {
            List<Session> out = new ArrayList<>();
            for (String line : connection.sync().clientList().split("\n")) {
                long id = -1;
                int port = -1;
                String name = "";
                for (String field : line.strip().split(" ")) {
                    if (field.startsWith("name=")) {
                        name = field.substring(5);
                    } else if (field.startsWith("id=")) {
                        id = Long.parseLong(field.substring(3));
                    } else if (field.startsWith("addr=")) {
                        String addr = field.substring(5);
                        int colon = addr.lastIndexOf(':');
                        if (colon > 0) {
                            port = Integer.parseInt(addr.substring(colon + 1));
                        }
                    }
                }
                if (id >= 0 && port >= 0) {
                    out.add(new Session(id, port, name));
                }
            }
            return out;
        }

        @Override
        public int killSessions(Set<Integer> clientPorts) {
            int killed = 0;
            for (Session s : sessions()) {
                if (clientPorts.contains(s.port())) {
                    killed += (int) (long) connection.sync().clientKill(KillArgs.Builder.id(s.id()));
                }
            }
            return killed;
        }

        @Override
        public long sessionMark() {
            // ids only grow (until a restart): every connection that exists now has a smaller id, every later one not
            return sessions().stream().mapToLong(Session::id).max().orElse(0) + 1;
        }

        @Override
        public int countSessions(Set<Integer> clientPorts, long mark) {
            // never the controller's own connections: after a restart fault ids start again below the mark, and
            // the controller's reconnected ones may come from a port a worker's proxy used before
            return (int) sessions().stream().filter(s -> clientPorts.contains(s.port()) && s.id() < mark
                    && !s.controllers()).count();
        }

        @Override
        public void close() {
            try {
                client.close();
            } finally {
                connection.close();
                admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }

        @Override
        public String toString() {
            return description();
        }
    }
}
