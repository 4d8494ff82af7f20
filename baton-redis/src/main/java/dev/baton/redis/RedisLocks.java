package dev.baton.redis;

import dev.baton.ForcedRelease;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.LockNames;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.DelegatingLockClient;
import dev.baton.spi.LockClients;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.netty.resolver.DefaultAddressResolverGroup;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Builds Redis {@link LockClient}s on Lettuce: the same API, options and exceptions as the JDBC clients.
 *
 * <p><b>How a lock is held.</b> Each operation is one Lua script on the server, on the keys of one lock (the name is
 * their hash tag, so one slot on a Cluster): acquire is {@code SET <lock> <token|time|owner> NX PX <lease>} with
 * {@code INCR} of the lock's token counter in the same script; release is a compare-and-delete on owner
 * <em>and</em> token with a {@code PUBLISH} of the release on the lock's channel; renewal is one script per
 * interval for every lease the client holds, {@code PEXPIRE} only where owner and token still match; a lease the
 * server no longer shows is reported lost once. {@code Lease.checkValid()} asks the server ({@code GET}).
 * Never {@code SETNX} then {@code EXPIRE}, never {@code GETSET}, never a client timestamp inside a script.
 *
 * <p><b>Fencing tokens</b> strictly increase per lock across expiry and clients: a grant's token is the largest of
 * the lock's counter + 1, the server's {@code TIME} in microseconds, and the highest token this client saw for the
 * lock + 1 (the client remembers it for the last 65,536 locks it used). So a token is above every earlier token of
 * the lock if the counter survived, <em>or</em> the server's clock is past the microsecond of every earlier grant,
 * <em>or</em> this client saw the highest earlier token. A restart without persistence or a failover to a lagging
 * replica therefore cannot make tokens go backwards unless the server's clock is also behind; when a client sees
 * that happen (the server would have granted it a token at or below one it saw), it raises the token above, repairs
 * the counter, and logs a {@code WARN} from {@code dev.baton.redis.RedisLockBackend}: a client that never saw the
 * higher token may have been granted a lower one. Two primaries granting at once (a failover's split brain) draw
 * different tokens unless both draw the same microsecond with the same counter. The counter key expires
 * {@linkplain Builder#tokenCounterExpiry some time} after the lock's last grant.
 *
 * <p><b>Waiting.</b> Waiters are woken by the release's message (one {@code PSUBSCRIBE} per client on
 * {@code <prefix>{*}:released}), else retry when the holder's {@code PTTL} ends, with a bounded backoff
 * ({@code minPollInterval}..{@code maxPollInterval}); after the pub/sub connection reconnects every waiter retries
 * at once. Hand-over is fair: a free lock goes to the longest waiter (see {@link RedisLockBackend}). A waiter's place
 * in line lives while its client sends heartbeats (one script every 250 ms per client that waits, for all its
 * waiters), whatever its lease: a waiter whose process died keeps a free lock from the next live waiter (and from
 * {@code tryAcquire()}) for at most about a second, and a live waiter keeps its place however short its lease.
 *
 * <p><b>Connections.</b> Baton opens two connections of its own (commands, pub/sub), named
 * {@code baton:<client id>} ({@code CLIENT SETNAME}), and closes only those when the client is closed, and the
 * {@link RedisClient} it created itself from a {@link RedisURI}. Given a {@link RedisURI}, that client rejects
 * commands while disconnected and never replays a lock script after a reconnect (a late acquire would create a lock
 * nobody knows it holds), and reconnects with a backoff of at most {@link #MAX_RECONNECT_DELAY}. Given your
 * {@link RedisClient}, its options and resources apply (Lettuce's default reconnect backoff grows to 30 s): Baton refuses a lock script while its
 * connection is down, but a script in flight when the connection drops may be replayed by Lettuce after the
 * reconnect if the client's options allow it; prefer the {@link RedisURI} form, or give your client
 * {@code disconnectedBehavior(REJECT_COMMANDS)}. Either way an acquire whose outcome is unknown (a timeout, a
 * dropped connection) is cleaned up by an owner-checked delete, and {@code EVALSHA} falls back to {@code EVAL} on
 * {@code NOSCRIPT} (after a restart, a failover or {@code SCRIPT FLUSH}).
 *
 * <p><b>Failover.</b> Redis replicates asynchronously: a restart without persistence, or a failover to a replica
 * that had not received the latest grant, forgets locks, and a second holder can be granted while the first still
 * works. The fencing token is the protection: the new grant's token is higher, and a resource that checks tokens
 * refuses the old holder's writes.
 *
 * <pre>{@code
 * try (LockClient locks = RedisLocks.builder(RedisURI.create("redis://localhost:6379")).build()) {
 *     try (Lease lease = locks.lock("nightly-report").acquire(Duration.ofSeconds(10))) {
 *         store.write(report, lease.fencingToken());
 *     }
 * }
 * }</pre>
 */
public final class RedisLocks {
    /** The default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = RedisKeys.DEFAULT_PREFIX;
    /**
     * The longest pause between two reconnect attempts of a client Baton creates from a {@link RedisURI}: after an
     * outage, it is connected again at most this long after Redis is back.
     */
    public static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);
    /** The default command timeout. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);
    /** How long a lock's token counter outlives its last grant by default. */
    public static final Duration DEFAULT_TOKEN_COUNTER_EXPIRY = Duration.ofDays(7);

    private RedisLocks() {
    }

    /** A builder over your {@link RedisClient}: Baton opens its own connections with it and closes only those. */
    public static Builder builder(RedisClient client) {
        if (client == null) {
            throw new IllegalArgumentException("redisClient must not be null");
        }
        return new Builder(client, null);
    }

    /** A builder over a URI: Baton creates (and closes with the lock client) a {@link RedisClient} of its own. */
    public static Builder builder(RedisURI uri) {
        if (uri == null) {
            throw new IllegalArgumentException("redisURI must not be null");
        }
        return new Builder(null, uri);
    }

    /**
     * A builder over a URL: Baton creates (and closes with the lock client) a {@link RedisClient} of its own. The URL
     * is Lettuce's ({@link RedisURI#create(String)}): {@code redis://[[user:]password@]host[:port][/database]},
     * {@code rediss://…} (TLS), or {@code redis-sentinel://[password@]host[:port][,host[:port]…][/database]#master}
     * — a primary found through its Sentinels, found again through them after a failover; its password is the
     * primary's, never sent to the Sentinels. Query parameters of Baton's are taken out of it:
     * <ul>
     *   <li>{@code requireReplicas=N} — {@link Builder#requireReplicas}: {@code WAIT N} after each grant;</li>
     *   <li>{@code replicaTimeout=D} — that {@code WAIT}'s timeout, {@code <n>ms} or {@code <n>s} (default
     *       {@value #DEFAULT_REPLICA_TIMEOUT_MS}ms);</li>
     *   <li>{@code sentinelPassword=P} — {@code redis-sentinel://} only: the password of Sentinels that ask for one
     *       ({@code requirepass} in their config), percent-encoded, given to each Sentinel of the URL.</li>
     * </ul>
     * Lettuce's own {@code timeout} parameter bounds connecting (to the Sentinels and the primary); without it that
     * bound is {@link Builder#commandTimeout}. Host names are resolved by the JDK ({@code InetAddress}, as JDBC
     * drivers and ZooKeeper resolve theirs: {@code /etc/hosts}, then the system's resolver, with the JDK's cache),
     * not by Netty's DNS client, Lettuce's default, which reads the resolver's configuration and opens a socket of
     * its own when a client starts. Its Lettuce resources run two I/O and two computation threads, not one of each
     * per core.
     * For example {@code redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/0?requireReplicas=1&replicaTimeout=500ms#mymaster}.
     *
     * @throws IllegalArgumentException if the URL is null, not one Lettuce accepts, or a parameter of Baton's has a
     *                                  bad value (the message names it)
     */
    public static Builder builder(String url) {
        if (url == null) {
            throw new IllegalArgumentException("url must not be null");
        }
        RedisUrl parsed = RedisUrl.parse(url);
        Builder builder = new Builder(null, parsed.redisUri());
        builder.connectTimeoutFromCommandTimeout = !parsed.hasTimeout();
        if (parsed.replicas() > 0) {
            builder.requireReplicas(parsed.replicas(), parsed.replicaTimeout());
        }
        return builder;
    }

    /** The timeout of {@code WAIT} when a URL asks for replicas without {@code replicaTimeout}. */
    public static final long DEFAULT_REPLICA_TIMEOUT_MS = 100;

    /** Settings of a Redis lock client; see {@link AbstractClientBuilder} for the shared ones. */
    public static final class Builder extends AbstractClientBuilder<Builder> {
        private final RedisClient client;
        private final RedisURI uri;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private int replicas;
        private Duration replicaTimeout = Duration.ofMillis(100);
        private Duration tokenCounterExpiry = DEFAULT_TOKEN_COUNTER_EXPIRY;
        private boolean allowEviction;
        /** Built from a URL without {@code timeout}: connecting is bounded by the command timeout. */
        private boolean connectTimeoutFromCommandTimeout;

        private Builder(RedisClient client, RedisURI uri) {
            this.client = client;
            this.uri = uri;
        }

        /**
         * The prefix of every key and channel (default {@value RedisLocks#DEFAULT_KEY_PREFIX}): 1 to 64 letters,
         * digits and {@code : _ . -}.
         *
         * @throws IllegalArgumentException naming what is wrong with it
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = RedisKeys.validatePrefix(keyPrefix);
            return this;
        }

        /**
         * How long a command may take before it fails (default 5 s; 10 ms to 5 min). An acquire that times out
         * has an unknown outcome and is cleaned up by an owner-checked delete.
         */
        public Builder commandTimeout(Duration timeout) {
            this.commandTimeout = within("commandTimeout", timeout, Duration.ofMillis(10), Duration.ofMinutes(5),
                    "a lock command that takes longer has lost its server");
            return this;
        }

        /**
         * How long a lock's token counter key ({@code <prefix>{<name>}:t}) lives after the lock's last grant
         * (default 7 days; 1 s to 3,650 days), so that locks used once leave nothing behind for good. Losing a
         * counter is safe: a token is never below the server's clock in microseconds, and after this long without
         * a grant that clock has passed every token the counter gave, unless the server's clock was stepped back
         * by more than this expiry.
         *
         * @throws IllegalArgumentException if null or out of those bounds (the message names both)
         */
        public Builder tokenCounterExpiry(Duration expiry) {
            this.tokenCounterExpiry = within("tokenCounterExpiry", expiry, Duration.ofSeconds(1),
                    Duration.ofDays(3650), "a counter is kept that long after its lock's last grant");
            return this;
        }

        /**
         * Accepts a Redis that may evict keys ({@code maxmemory} above 0 with a {@code maxmemory-policy} other
         * than {@code noeviction}), which {@link #build()} otherwise refuses: an evicted lock key lets a second
         * holder in while the first still works (under {@code volatile-*} policies lock keys, which carry an
         * expiry, are the first to go). Only the fencing token then protects the resource. Also skips reading
         * {@code INFO memory}, for a server where it is unavailable.
         */
        public Builder allowEviction() {
            this.allowEviction = true;
            return this;
        }

        /**
         * Requires {@code replicas} replicas to acknowledge each grant ({@code WAIT replicas timeout} after the
         * acquire script) within {@code timeout}, else the grant is given back and the acquire fails with a
         * {@link dev.baton.LockBackendException} naming how many did (default 0: no {@code WAIT}). This narrows,
         * but does not close, the window in which a failover to an asynchronous replica loses a grant: Redis
         * replication stays asynchronous, a replica that acknowledged can still lose the write, and renewals are
         * not waited for. The fencing token remains the protection. {@code WAIT} blocks Baton's command connection
         * for up to {@code timeout}, delaying the client's other lock commands meanwhile.
         *
         * @param replicas 0 to 16
         * @param timeout  1 ms to 10 s, shorter than {@link #commandTimeout}
         */
        public Builder requireReplicas(int replicas, Duration timeout) {
            if (replicas < 0 || replicas > 16) {
                throw new IllegalArgumentException("replicas must be between 0 and 16, was " + replicas);
            }
            this.replicas = replicas;
            this.replicaTimeout = within("replica timeout", timeout, Duration.ofMillis(1), Duration.ofSeconds(10),
                    "the WAIT blocks the client's command connection that long");
            return this;
        }

        /**
         * Connects (two connections), checks the server, subscribes to the release channels and starts the client.
         * The checks read {@code INFO memory} and {@code INFO cluster}.
         *
         * @throws dev.baton.LockBackendException       if Redis cannot be reached, or its settings cannot be read
         * @throws dev.baton.LockConfigurationException if Redis may evict keys ({@code maxmemory} above 0 and
         *                                              {@code maxmemory-policy} not {@code noeviction}) and
         *                                              {@link #allowEviction()} was not called, or if it is a Redis
         *                                              Cluster node ({@code cluster_enabled:1}), which is not
         *                                              supported
         * @throws IllegalArgumentException             if the replica timeout is not below the command timeout
         */
        @Override
        public RedisLockClient build() {
            ClientSettings settings = settings();
            if (replicas > 0 && replicaTimeout.compareTo(commandTimeout) >= 0) {
                throw new IllegalArgumentException("the replica timeout (" + replicaTimeout.toMillis()
                        + " ms) must be shorter than commandTimeout (" + commandTimeout.toMillis() + " ms)");
            }
            RedisClient c = client;
            String endpoint;
            if (c == null) {
                if (connectTimeoutFromCommandTimeout) {
                    uri.setTimeout(commandTimeout);
                }
                // reconnect attempts back off from 1 ms to at most MAX_RECONNECT_DELAY (Lettuce's default grows to
                // 30 s, so a client could stay disconnected for up to 30 s after a long outage ended)
                ClientResources.Builder resourcesBuilder = ClientResources.builder()
                        .reconnectDelay(Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2,
                                TimeUnit.MILLISECONDS))
                        // two connections (a few more behind Sentinels) need no more than two threads; Lettuce's
                        // default is one per core, each event loop with a selector of its own, made at start
                        .ioThreadPoolSize(2)
                        .computationThreadPoolSize(2);
                if (onlyAddresses(uri)) {
                    // hosts given as IP addresses need no lookup, so the JDK's resolver answers at once, where
                    // Netty's DNS client costs a short-lived process (baton run) a noticeable part of its start; a
                    // host name keeps Netty's DNS client, since the JDK's would block an event loop (and every
                    // connection on it, renewals included) for as long as a lookup takes
                    resourcesBuilder.addressResolverGroup(DefaultAddressResolverGroup.INSTANCE);
                }
                ClientResources resources = resourcesBuilder.build();
                // connections without Lettuce's synchronous API, which is slow to build (AsyncOnlyRedisClient)
                c = new AsyncOnlyRedisClient(resources, uri);
                c.setOptions(ClientOptions.builder()
                        .autoReconnect(true)
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                        .replayFilter(cmd -> isScript(cmd.getType()))
                        .build());
                endpoint = endpoint(uri);
            } else {
                endpoint = "your RedisClient";
            }
            RedisLockBackend backend = new RedisLockBackend(c, client == null, keyPrefix, commandTimeout, endpoint, replicas,
                    replicaTimeout, tokenCounterExpiry);
            try {
                backend.checkServer(allowEviction);
                return new Client(LockClients.create(backend, settings), backend, keyPrefix);
            } catch (RuntimeException e) {
                backend.close();
                throw e;
            }
        }

        /** How messages name the server: its host and port, or a Sentinel-managed primary and its Sentinels. */
        private static String endpoint(RedisURI uri) {
            if (uri.getSentinels().isEmpty()) {
                return uri.getHost() + ":" + uri.getPort();
            }
            StringBuilder b = new StringBuilder("primary '" + uri.getSentinelMasterId() + "' of the Sentinels ");
            for (int i = 0; i < uri.getSentinels().size(); i++) {
                RedisURI s = uri.getSentinels().get(i);
                b.append(i == 0 ? "" : ",").append(s.getHost()).append(':').append(s.getPort());
            }
            return b.toString();
        }

        /** Whether every host of {@code uri} (its Sentinels' for a Sentinel URL) is an IPv4 or IPv6 address, not a name. */
    static boolean onlyAddresses(RedisURI uri) {
        java.util.List<String> hosts = new java.util.ArrayList<>();
        if (uri.getHost() != null) {
            hosts.add(uri.getHost());
        }
        uri.getSentinels().forEach(sentinel -> hosts.add(sentinel.getHost()));
        return !hosts.isEmpty() && hosts.stream().allMatch(h -> h != null
                && (h.matches("\\d{1,3}(\\.\\d{1,3}){3}") || h.contains(":")));
    }

    private static boolean isScript(ProtocolKeyword type) {
            return type == CommandType.EVAL || type == CommandType.EVALSHA;
        }
    }

    /** The core client, with the operator's force release. */
    private static final class Client extends DelegatingLockClient implements RedisLockClient {
        private final RedisLockBackend backend;
        private final String keyPrefix;

        Client(LockClient core, RedisLockBackend backend, String keyPrefix) {
            super(core);
            this.backend = backend;
            this.keyPrefix = keyPrefix;
        }

        @Override
        public String keyPrefix() {
            return keyPrefix;
        }

        @Override
        public Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
            LockNames.validate(name);
            if (token == null) {
                throw new IllegalArgumentException("token must not be null (use OptionalLong.empty())");
            }
            return backend.forceRelease(name, token);
        }

        @Override
        public Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
            LockNames.validate(name);
            if (owner == null || owner.isEmpty()) {
                throw new IllegalArgumentException("owner must be a waiter's id (as LockInfo.line() shows it), was "
                        + (owner == null ? "null" : "empty"));
            }
            return backend.removeFromLine(name, owner);
        }
    }
}
