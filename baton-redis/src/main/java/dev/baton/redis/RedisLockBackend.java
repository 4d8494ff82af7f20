package dev.baton.redis;

import dev.baton.ForcedRelease;
import dev.baton.LockBackendException;
import dev.baton.NothingGrantedException;
import dev.baton.LockConfigurationException;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsTimeLeft;
import dev.baton.spi.ClearsLostGrants;
import dev.baton.spi.WaitingQueue;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Redis locks over two connections of Baton's own (commands, pub/sub), through the {@link Scripts}. See
 * {@link RedisLocks} for the guarantees.
 *
 * <p><b>Fair hand-over ({@link WaitingQueue}).</b> A waiting exclusive acquirer keeps a place in a per-lock line
 * (a sorted set by arrival, under the lock's hash tag); a free lock goes only to the head of the line while others
 * wait, so the thread that just released goes to the back, and a waiter is served in arrival order. A try-once
 * acquire never takes a place, and gets a free lock only when nobody waits. Waiting writers of a read-write lock
 * keep claims that hold back new readers the same way. A release's message names the head of the line, so only the
 * head's client wakes its waiters: the others would only find the lock promised to the head.
 *
 * <p><b>A place lives while its waiter does.</b> A place (or a writer's claim) expires {@link #PLACE_TTL} after its
 * client last renewed it, whatever the waiter's lease: each client renews all the places it keeps in one script
 * ({@link Scripts#KEEP_PLACES}) every {@link #HEARTBEAT_INTERVAL}, on a thread of its own, and each attempt renews
 * the attempt's place too. A waiter whose process died therefore holds up a free lock for at most one place expiry
 * after its last heartbeat: the next live waiter's heartbeat (which runs again just after a dead head's place
 * expires) removes it and publishes the new head, whose waiter takes the lock at once; a release or an acquire that
 * reads the line removes expired places first. A waiter that gives up withdraws its place at once, and a closing
 * client withdraws all of its places. A live waiter loses its place only if its client sends no heartbeat for
 * {@code PLACE_TTL - HEARTBEAT_INTERVAL} (a stall of the JVM or of the network that long); it then takes a new place
 * at the back at its next attempt. Cost: one script every {@code HEARTBEAT_INTERVAL} per client that keeps any place
 * (4 a second), however many of its threads wait; nothing for a client that waits for nothing.
 */
final class RedisLockBackend implements NotifiesReleases, ConfirmsGrants, ReadWriteModes, WaitingQueue,
        ReportsTimeLeft, ClearsLostGrants {
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);
    /**
     * How long a place in line (or a writer's claim) lives after its client's last heartbeat or attempt: what a dead
     * waiter can cost the next one. One second is the issue's target, and leaves a live client three missed
     * heartbeats (750 ms of stall) before its waiters lose their places.
     */
    static final Duration PLACE_TTL = Duration.ofSeconds(1);
    /** How often a client renews every place it keeps ({@link Scripts#KEEP_PLACES}): a quarter of the expiry. */
    static final Duration HEARTBEAT_INTERVAL = PLACE_TTL.dividedBy(4);
    private static final String PLACE_TTL_MS = Long.toString(PLACE_TTL.toMillis());

    private final RedisClient client;
    private final boolean ownsClient;
    private final String prefix;
    private final String description;
    private final StatefulRedisConnection<String, String> connection;
    private final Commands commands;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    /** Places in line this client keeps on the server, withdrawn at close. */
    private final Set<Place> places = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean subscribedOnce = new AtomicBoolean();
    private final int replicas;
    private final Duration commandTimeout;
    private final Duration replicaTimeout;
    private final String counterExpiry;
    private final SeenTokens seen = new SeenTokens();
    private volatile ReleaseListener listener;
    private volatile boolean closed;
    /** Runs the heartbeat of this client's places; started by {@link #start}. */
    private volatile ScheduledExecutorService heartbeat;

    private record Place(String name, LockMode mode, String owner) {
    }

    /**
     * Clean-ups of acquires with an unknown outcome that have not reached Redis yet (the connection was down),
     * retried in the background until one does or the lease a late grant would have has passed. An acquire of
     * the same lock, mode and owner takes its clean-up over and sends it first, in order on the same connection,
     * so a retry can never delete the later grant. Guarded by itself for that hand-over.
     */
    private final Map<Place, Cleanup> cleanups = new HashMap<>();

    private record Cleanup(String[] keys, String[] args, long untilNanos) {
    }

    RedisLockBackend(RedisClient client, boolean ownsClient, String prefix, Duration commandTimeout,
                     String endpoint, int replicas, Duration replicaTimeout, Duration counterExpiry) {
        this.client = client;
        this.counterExpiry = Long.toString(counterExpiry.toMillis());
        this.replicas = replicas;
        this.replicaTimeout = replicaTimeout;
        this.commandTimeout = commandTimeout;
        this.ownsClient = ownsClient;
        this.prefix = prefix;
        this.description = "redis (" + endpoint + ", prefix " + prefix + ")";
        StatefulRedisConnection<String, String> c = null;
        StatefulRedisPubSubConnection<String, String> p = null;
        try {
            c = client.connect(StringCodec.UTF8);
            c.setTimeout(commandTimeout);
            p = client.connectPubSub(StringCodec.UTF8);
            p.setTimeout(commandTimeout);
        } catch (RuntimeException e) {
            if (c != null) {
                c.close();
            }
            if (ownsClient) {
                shutdownOwnClient(); // and its resources: each failed build() would leak Lettuce's threads
            }
            if (e instanceof RedisException) {
                throw new LockBackendException(description, "cannot connect to Redis: " + e.getMessage(), e);
            }
            throw e;
        }
        this.connection = c;
        this.commands = new Commands(c.async(), commandTimeout);
        this.pubSub = p;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void listen(ReleaseListener listener) {
        this.listener = listener;
    }

    @Override
    public void start(String clientId) {
        String name = connectionName(clientId);
        try {
            commands.clientSetname(name);
            pubSub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String pattern, String channel, String message) {
                    ReleaseListener l = listener;
                    if (l == null) {
                        return;
                    }
                    int nul = message.indexOf('\0');
                    if (nul < 0) {
                        l.released(message);
                        return;
                    }
                    // "<name>\0<head of the line>": only the head may take the lock, so only its waiter wakes
                    // (this client's other waiters, and waiters elsewhere, keep their park)
                    String name = message.substring(0, nul);
                    String head = message.substring(nul + 1);
                    if (places.contains(new Place(name, LockMode.EXCLUSIVE, head))) {
                        l.released(name, head);
                    }
                }

                @Override
                public void psubscribed(String pattern, long count) {
                    // Lettuce subscribes again after a reconnect: releases published meanwhile were lost
                    ReleaseListener l = listener;
                    if (subscribedOnce.getAndSet(true) && l != null) {
                        log.debug("pub/sub of {} re-established: every waiter retries", description);
                        l.resynchronize();
                    }
                }
            });
            Commands.await(pubSub.async().clientSetname(name), commandTimeout);
            Commands.await(pubSub.async().psubscribe(RedisKeys.channelPattern(prefix)), commandTimeout);
            ScheduledExecutorService beat = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "baton-redis-places " + clientId);
                t.setDaemon(true);
                return t;
            });
            heartbeat = beat;
            beat.schedule(this::keepPlaces, HEARTBEAT_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RedisException e) {
            close();
            throw new LockBackendException(description, "cannot set up the client's connections: " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a server Baton cannot keep its promises on: one that may evict lock keys (unless
     * {@code allowEviction}: eviction of a held lock's key lets a second holder in), and a Redis Cluster node
     * (each lock's keys share a slot, but a client's renewal covers all its locks in one script: {@code CROSSSLOT}).
     * Reads {@code INFO memory} and {@code INFO cluster}, which work where {@code CONFIG} is disabled.
     *
     * @throws LockConfigurationException naming the setting, its value and the way out
     * @throws LockBackendException       if the server's settings could not be read
     */
    void checkServer(boolean allowEviction) {
        Map<String, String> cluster = info("cluster", allowEviction);
        if ("1".equals(cluster.get("cluster_enabled"))) {
            throw new LockConfigurationException(description + " is a Redis Cluster node (INFO cluster:"
                    + " cluster_enabled:1, server setting cluster-enabled yes), which RedisLocks does not support:"
                    + " a client renews all its leases in one script, which a cluster refuses (CROSSSLOT) once the"
                    + " leases are in different slots, and every lease would be lost. Use a standalone Redis or a"
                    + " Sentinel-managed primary (cluster-enabled no)");
        }
        if (allowEviction) {
            return;
        }
        Map<String, String> memory = info("memory", false);
        String maxmemory = memory.get("maxmemory");
        String policy = memory.get("maxmemory_policy");
        if (maxmemory == null || policy == null) {
            throw new LockConfigurationException(description + ": INFO memory shows no maxmemory or"
                    + " maxmemory_policy, so Baton cannot tell whether Redis may evict lock keys; allowEviction()"
                    + " on the builder skips this check");
        }
        if (!"0".equals(maxmemory) && !"noeviction".equals(policy)) {
            throw new LockConfigurationException(description + " may evict lock keys: maxmemory is " + maxmemory
                    + " bytes with maxmemory-policy " + policy + ", so under memory pressure Redis can delete a held"
                    + " lock's key and grant the lock to a second holder (under volatile-* policies lock keys, which"
                    + " have an expiry, go first). Set maxmemory-policy noeviction (or maxmemory 0), or give the"
                    + " locks a Redis of their own; allowEviction() on the builder accepts the risk");
        }
    }

    private Map<String, String> info(String section, boolean allowEviction) {
        String text;
        try {
            text = commands.info(section);
        } catch (RedisException e) {
            throw new LockBackendException(description, "cannot read the server's settings (INFO " + section + "): "
                    + e.getMessage() + "; Baton checks that Redis is no cluster"
                    + (allowEviction ? "" : " and never evicts lock keys (allowEviction() skips the eviction check)"),
                    e);
        }
        Map<String, String> out = new HashMap<>();
        for (String line : text.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                out.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return out;
    }

    /** {@code baton:<client id>}, with anything CLIENT SETNAME refuses (spaces, control characters) as '_'. */
    static String connectionName(String clientId) {
        StringBuilder sb = new StringBuilder("baton:");
        clientId.codePoints().forEach(cp -> sb.append(cp > 32 && cp < 127 ? (char) cp : '_'));
        return sb.toString();
    }

    // ---- scripts ------------------------------------------------------------------------------------------

    private <T> T run(Scripts.Script script, ScriptOutputType type, String what, String[] keys, String... args) {
        if (!connection.isOpen()) {
            // never queued to be replayed after a reconnect, when nobody waits for its outcome any more
            throw new LockBackendException(description, what + " was not sent: the connection to Redis is down"
                    + " (reconnecting) and lock commands are not queued while disconnected", null);
        }
        try {
            return await(connection.async().evalsha(script.sha(), type, keys, args), what);
        } catch (RedisNoScriptException e) {
            // a restart, a failover or SCRIPT FLUSH emptied the script cache: EVAL runs and caches it again
            return await(connection.async().<T>eval(script.body(), type, keys, args), what);
        }
    }

    /**
     * Waits for a command, at most the command timeout, without being interrupted: an interrupt cannot take back
     * a script already sent, so the caller waits for its outcome (a few ms) and the core then sees the interrupt
     * flag, set again here, between its steps (and withdraws, or ends the wait, as for any interruption).
     */
    private <T> T await(RedisFuture<T> future, String what) {
        long deadline = System.nanoTime() + commandTimeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    future.cancel(false);
                    throw new RedisCommandTimeoutException(what + " timed out after " + commandTimeout.toMillis()
                            + " ms");
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RedisException re) {
                        throw re;
                    }
                    throw new RedisException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private LockBackendException failed(String what, RedisException e) {
        return new LockBackendException(description, what + " failed: " + e.getMessage(), e);
    }

    // ---- acquire --------------------------------------------------------------------------------------------

    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, request.name());
        String lease = Long.toString(Math.max(1, request.leaseTime().toMillis()));
        boolean waits = request.patience() == AcquireRequest.Patience.WAIT;
        String wait = waits ? "1" : "0";
        if (!connection.isOpen()) {
            throw new NothingGrantedException(description, "acquire of '" + request.name() + "' was not sent: the"
                    + " connection to Redis is down (reconnecting) and lock commands are not queued while"
                    + " disconnected; nothing was granted", null);
        }
        sendPendingCleanup(request);
        long floor = seen.highest(request.name());
        String seenToken = Long.toString(floor);
        List<Object> r;
        try {
            r = switch (request.mode()) {
                case EXCLUSIVE -> run(Scripts.ACQUIRE, ScriptOutputType.MULTI, "acquire of '" + request.name() + "'",
                        new String[] {k.exclusive(), k.counter(), k.line(), k.lineExpiry()}, request.owner(), lease, wait,
                        seenToken, counterExpiry, PLACE_TTL_MS);
                case READ -> run(Scripts.ACQUIRE_READ, ScriptOutputType.MULTI, "read acquire of '" + request.name() + "'",
                        new String[] {k.writer(), k.readers(), k.counter(), k.writerClaims()}, request.owner(), lease,
                        seenToken, counterExpiry);
                case WRITE -> run(Scripts.ACQUIRE_WRITE, ScriptOutputType.MULTI, "write acquire of '" + request.name() + "'",
                        new String[] {k.writer(), k.readers(), k.counter(), k.writerClaims()}, request.owner(), lease, wait,
                        seenToken, counterExpiry, PLACE_TTL_MS);
            };
        } catch (RedisException e) {
            String refusal = definiteRefusal(e);
            if (refusal != null) {
                places.remove(new Place(request.name(), request.mode(), request.owner()));
                throw new NothingGrantedException(description, "acquire of '" + request.name() + "' " + refusal, e);
            }
            // a timeout or a dropped connection: the script may have run. Undo whatever it granted this owner.
            abandon(request, k);
            throw new LockBackendException(description, "acquire of '" + request.name() + "' has an unknown outcome ("
                    + e.getMessage() + "); a grant it may have made is deleted by an owner-checked clean-up, sent now"
                    + " or, if Redis cannot be reached, once the connection is back (until that grant's lease would"
                    + " end)", e);
        }
        Place place = new Place(request.name(), request.mode(), request.owner());
        if (((Long) r.get(0)) == 1L) {
            places.remove(place);
            long token = (Long) r.get(1);
            seen.saw(request.name(), token);
            if (((Long) r.get(2)) == 1L) {
                log.warn("{}: lock '{}' would have been granted a fencing token at or below token {}, which this"
                        + " client saw for it before: the server's token counter was lost or set back (a restart"
                        + " without persistence, a failover to a replica that lagged) and its clock (TIME) is behind"
                        + " that token. This grant's token was raised to {} and the counter repaired; but a client"
                        + " that never saw token {} may have been granted a lower token meanwhile, so a resource may"
                        + " have seen fencing tokens go backwards. Check the server's clock and persistence",
                        description, request.name(), floor, token, floor);
            }
            if (replicas > 0) {
                awaitReplicas(request, token);
            }
            return new AcquireResult.Granted(token);
        }
        if (waits && request.mode() != LockMode.READ) {
            places.add(place);
        }
        String holder = (String) r.get(1);
        long token = (Long) r.get(2);
        long left = (Long) r.get(3);
        seen.saw(request.name(), token);
        return new AcquireResult.Busy(holder == null || holder.isEmpty() ? null : holder, token,
                left >= 0 ? Duration.ofMillis(left) : null);
    }

    /**
     * What a failure says for sure about an acquire, or null when its outcome is unknown. Lettuce rejects a command
     * while disconnected before sending it; a replica refuses the script's first write ({@code READONLY}), and a
     * server over its {@code maxmemory} with {@code noeviction} the first write that would add memory
     * ({@code OOM}), which in every acquire script comes before the grant, so the script granted nothing.
     */
    private static String definiteRefusal(RedisException e) {
        String m = String.valueOf(e.getMessage());
        if (m.startsWith("READONLY")) {
            return "refused: the server is a read-only replica (" + m + "); nothing was granted. Connect to the"
                    + " primary";
        }
        if (m.startsWith("OOM")) {
            return "refused: the server is out of memory (" + m + "); nothing was granted";
        }
        if (m.contains("Currently not connected")) {
            return "was not sent: the connection to Redis is down (reconnecting) and lock commands are not queued"
                    + " while disconnected; nothing was granted";
        }
        return null;
    }

    /**
     * {@code WAIT} for the required replicas after a grant (it cannot run inside the script: since Redis 7 a
     * script does not block). Fewer acknowledgements: the grant is given back and the acquire fails.
     */
    private void awaitReplicas(AcquireRequest request, long token) {
        long acked;
        try {
            acked = await(connection.async().waitForReplication(replicas, Math.max(1, replicaTimeout.toMillis())),
                    "WAIT for " + replicas + " replica(s)");
        } catch (RedisException e) {
            giveBack(request, token);
            throw new LockBackendException(description, "acquire of '" + request.name() + "': waiting for "
                    + replicas + " replica(s) to acknowledge the grant failed (" + e.getMessage()
                    + "); the grant was given back", e);
        }
        if (acked < replicas) {
            giveBack(request, token);
            throw new LockBackendException(description, "acquire of '" + request.name() + "': only " + acked
                    + " of the " + replicas + " required replica(s) acknowledged the grant within "
                    + replicaTimeout.toMillis() + " ms; the grant was given back", null);
        }
    }

    private void giveBack(AcquireRequest request, long token) {
        try {
            release(new LeaseKey(request.name(), request.owner(), token, request.mode()));
        } catch (RuntimeException e) {
            log.warn("could not give back the grant of '{}' (token {}); it ends within its lease", request.name(),
                    token, e);
        }
    }

    /**
     * The owner-checked delete after an acquire whose outcome is unknown; sent without waiting for it, and retried
     * (after a reconnect) while it cannot reach Redis.
     */
    private void abandon(AcquireRequest request, RedisKeys.Lock k) {
        Place place = new Place(request.name(), request.mode(), request.owner());
        places.remove(place);
        String[] keys = switch (request.mode()) {
            case EXCLUSIVE -> new String[] {k.exclusive(), k.line(), k.lineExpiry()};
            case WRITE -> new String[] {k.writer(), k.writerClaims(), k.writerClaims()};
            case READ -> new String[] {k.readers(), k.readers(), k.readers()};
        };
        String[] args = {request.owner(), k.channel(), request.name(), request.mode() == LockMode.READ ? "z" : "s"};
        Cleanup cleanup = new Cleanup(keys, args, System.nanoTime() + request.leaseTime().toNanos());
        synchronized (cleanups) {
            cleanups.put(place, cleanup);
        }
        sendCleanup(place, cleanup, Duration.ofMillis(50));
    }

    /** Sends the clean-up if it is still pending; on failure tries again after {@code backoff} (doubling to 1 s). */
    private void sendCleanup(Place place, Cleanup cleanup, Duration backoff) {
        RedisFuture<Long> sent;
        synchronized (cleanups) {
            if (closed || cleanups.get(place) != cleanup) {
                return; // done, or taken over by a later acquire
            }
            sent = connection.async().eval(Scripts.ABANDON.body(), ScriptOutputType.INTEGER, cleanup.keys(),
                    cleanup.args());
        }
        sent.whenComplete((n, e) -> {
            if (e == null) {
                synchronized (cleanups) {
                    cleanups.remove(place, cleanup);
                }
                return;
            }
            if (closed || System.nanoTime() - cleanup.untilNanos() >= 0) {
                synchronized (cleanups) {
                    cleanups.remove(place, cleanup);
                }
                log.warn("could not clean up after the acquire of '{}' with an unknown outcome; a grant it may have"
                        + " made ends within its lease", place.name(), e);
                return;
            }
            log.debug("clean-up after the acquire of '{}' failed ({}); retrying in {} ms", place.name(),
                    e.getMessage(), backoff.toMillis());
            Duration next = backoff.multipliedBy(2).compareTo(Duration.ofSeconds(1)) > 0 ? Duration.ofSeconds(1)
                    : backoff.multipliedBy(2);
            CompletableFuture.delayedExecutor(backoff.toMillis(), TimeUnit.MILLISECONDS)
                    .execute(() -> sendCleanup(place, cleanup, next));
        });
    }

    /**
     * Before an acquire: a clean-up still pending for the same lock, mode and owner is sent first and waited for
     * (it is this caller's own late grant), so the caller is not told busy by it and a later retry cannot delete
     * the grant this acquire makes.
     */
    private void sendPendingCleanup(AcquireRequest request) {
        Place place = new Place(request.name(), request.mode(), request.owner());
        RedisFuture<Long> sent;
        synchronized (cleanups) {
            Cleanup cleanup = cleanups.remove(place);
            if (cleanup == null) {
                return;
            }
            if (!connection.isOpen()) {
                cleanups.put(place, cleanup);
                throw new NothingGrantedException(description, "acquire of '" + request.name() + "' was not sent: the"
                        + " connection to Redis is down (reconnecting), and the clean-up of an earlier acquire with"
                        + " an unknown outcome is still to be sent", null);
            }
            sent = connection.async().eval(Scripts.ABANDON.body(), ScriptOutputType.INTEGER, cleanup.keys(),
                    cleanup.args());
        }
        try {
            await(sent, "clean-up of an earlier acquire of '" + request.name() + "'");
        } catch (RedisException e) {
            throw new NothingGrantedException(description, "acquire of '" + request.name() + "' was not sent: the"
                    + " clean-up of an earlier acquire with an unknown outcome failed (" + e.getMessage() + ")", e);
        }
    }

    @Override
    public void withdraw(AcquireRequest request) {
        Place place = new Place(request.name(), request.mode(), request.owner());
        if (places.remove(place)) {
            withdraw(place);
        }
    }

    private void withdraw(Place place) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, place.name());
        String[] keys = place.mode() == LockMode.EXCLUSIVE ? new String[] {k.line(), k.lineExpiry()}
                : new String[] {k.writerClaims(), k.writerClaims()};
        try {
            run(Scripts.WITHDRAW, ScriptOutputType.INTEGER, "withdrawal from the line of '" + place.name() + "'",
                    keys, place.owner(), k.channel(), place.name());
        } catch (RedisException e) {
            throw failed("withdrawal from the line of '" + place.name() + "'", e);
        }
    }

    /**
     * One heartbeat: renews every place this client keeps in one script, then schedules the next one
     * {@link #HEARTBEAT_INTERVAL} after this one started, or sooner, just after the place at the head of a free
     * lock's line expires (so that, if its waiter is dead, the script removes it and publishes the next head at once).
     * Heartbeat thread. A failure is logged and the next beat tries again: places then live {@link #PLACE_TTL} after
     * the last heartbeat that got through.
     */
    private void keepPlaces() {
        if (closed) {
            return;
        }
        long started = System.nanoTime();
        long next = HEARTBEAT_INTERVAL.toMillis();
        try {
            List<Place> list = List.copyOf(places);
            if (!list.isEmpty()) {
                String[] keys = new String[3 * list.size()];
                String[] args = new String[1 + 3 * list.size()];
                args[0] = PLACE_TTL_MS;
                for (int i = 0; i < list.size(); i++) {
                    Place p = list.get(i);
                    RedisKeys.Lock k = RedisKeys.Lock.of(prefix, p.name());
                    boolean exclusive = p.mode() == LockMode.EXCLUSIVE;
                    keys[3 * i] = exclusive ? k.line() : k.writerClaims();
                    keys[3 * i + 1] = exclusive ? k.lineExpiry() : k.writerClaims();
                    keys[3 * i + 2] = exclusive ? k.exclusive() : k.writer();
                    args[1 + 3 * i] = p.owner();
                    args[2 + 3 * i] = k.channel();
                    args[3 + 3 * i] = p.name();
                }
                List<Object> r = run(Scripts.KEEP_PLACES, ScriptOutputType.MULTI,
                        "heartbeat of " + list.size() + " place(s) in line", keys, args);
                long soonest = (Long) r.get(0);
                if (soonest >= 0) {
                    next = Math.min(next, soonest + 1);
                }
                if (r.size() - 1 < list.size() && log.isDebugEnabled()) {
                    log.debug("{}: {} of {} place(s) in line were gone at the heartbeat (granted, withdrawn, or"
                            + " expired after missed heartbeats; a waiter takes a new place at its next attempt)",
                            description, list.size() - (r.size() - 1), list.size());
                }
            }
        } catch (RuntimeException e) {
            log.debug("heartbeat of the places in line on {} failed: {}; the next one tries again", description,
                    e.getMessage());
        } finally {
            ScheduledExecutorService beat = heartbeat;
            if (!closed && beat != null) {
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                try {
                    beat.schedule(this::keepPlaces, Math.max(0, next - elapsed), TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    // closing
                }
            }
        }
    }

    // ---- release, renew, confirm ------------------------------------------------------------------------------

    private static String member(LeaseKey lease) {
        return lease.token() + "|" + lease.owner();
    }

    private static String keyOf(RedisKeys.Lock k, LockMode mode) {
        return switch (mode) {
            case EXCLUSIVE -> k.exclusive();
            case WRITE -> k.writer();
            case READ -> k.readers();
        };
    }

    @Override
    public boolean release(LeaseKey lease) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, lease.name());
        String what = "release of '" + lease.name() + "'";
        try {
            Long n = lease.mode() == LockMode.READ
                    ? run(Scripts.RELEASE_READ, ScriptOutputType.INTEGER, what, new String[] {k.readers()},
                            member(lease), k.channel(), lease.name())
                    : run(Scripts.RELEASE, ScriptOutputType.INTEGER, what,
                            new String[] {keyOf(k, lease.mode()), k.line(), k.lineExpiry()},
                            lease.owner(), Long.toString(lease.token()), k.channel(), lease.name(),
                            lease.mode() == LockMode.WRITE ? "1" : "0");
            return n != null && n == 1L;
        } catch (RedisException e) {
            throw failed(what, e);
        }
    }

    /**
     * A grant the core declared lost (its renewal found less time left than the client counted on, or its deadline
     * passed): its key may live on for a whole lease, held by nobody. Sent in the background with the holder's own
     * release script, which deletes the key only if it still holds this owner and token (never a later holder's),
     * and hands the lock to the head of its line. If Redis cannot be reached, the key ends with its expiry.
     */
    @Override
    public void lost(LeaseKey lease) {
        ScheduledExecutorService beat = heartbeat;
        Runnable clear = () -> {
            try {
                release(lease);
            } catch (RuntimeException e) {
                log.debug("clearing lost grant '{}' (token {}) failed; it ends with its expiry", lease.name(),
                        lease.token(), e);
            }
        };
        try {
            if (beat != null) {
                beat.execute(clear);
            } else {
                CompletableFuture.runAsync(clear);
            }
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing: the key ends with its expiry
        }
    }

    /**
     * Reads the live exclusive grant of {@code name} and releases exactly that grant (owner and token) with the
     * holder's own release script, so a grant made in between is never ended; if it changed in between, looks again
     * (at most three times).
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, name);
        String what = "force release of '" + name + "'";
        for (int attempt = 0; attempt < 3; attempt++) {
            String v;
            long pttl;
            try {
                v = commands.get(k.exclusive());
                pttl = v == null ? -2 : commands.pttl(k.exclusive());
            } catch (RedisException e) {
                throw failed(what, e);
            }
            String[] parts = v == null ? new String[0] : v.split("\\|", 3);
            if (parts.length < 3 || !parts[0].matches("\\d{1,18}") || pttl == -2) {
                return Optional.empty();
            }
            long live = Long.parseLong(parts[0]);
            if (token.isPresent() && live != token.getAsLong()) {
                return Optional.empty();
            }
            if (release(new LeaseKey(name, parts[2], live))) {
                return Optional.of(new ForcedRelease(name, parts[2], live, Duration.ofMillis(Math.max(0, pttl))));
            }
        }
        return Optional.empty();
    }

    /**
     * Removes {@code owner}'s place in the line of the exclusive lock {@code name} with the waiter's own withdrawal
     * script (expired places first; the next head is woken if the place was the head), after reading it (arrival
     * and expiry) for the answer.
     */
    Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, name);
        String what = "removal of " + owner + "'s place in the line of '" + name + "'";
        try {
            Double arrivalUs = commands.zscore(k.line(), owner);
            Double expiryMs = commands.zscore(k.lineExpiry(), owner);
            Long removed = run(Scripts.WITHDRAW, ScriptOutputType.INTEGER, what,
                    new String[] {k.line(), k.lineExpiry()}, owner, k.channel(), name);
            if (removed == null || removed != 1L || arrivalUs == null) {
                return Optional.empty();
            }
            long us = arrivalUs.longValue();
            return Optional.of(new LockInfo.Waiter(owner,
                    Instant.ofEpochSecond(us / 1_000_000, (us % 1_000_000) * 1000),
                    expiryMs == null ? null : Instant.ofEpochMilli(expiryMs.longValue())));
        } catch (RedisException e) {
            throw failed(what, e);
        }
    }

    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        return renewReportingTimeLeft(leases, leaseTime).keySet();
    }

    @Override
    public Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime) {
        List<LeaseKey> list = new ArrayList<>(leases);
        if (list.isEmpty()) {
            return Map.of();
        }
        // one script for every lease: a standalone Redis (or a Sentinel's primary) is one slot space
        String[] keys = new String[list.size()];
        String[] args = new String[1 + 2 * list.size()];
        args[0] = Long.toString(Math.max(1, leaseTime.toMillis()));
        for (int i = 0; i < list.size(); i++) {
            LeaseKey l = list.get(i);
            keys[i] = keyOf(RedisKeys.Lock.of(prefix, l.name()), l.mode());
            args[1 + 2 * i] = l.mode() == LockMode.READ ? "z" : "s";
            args[2 + 2 * i] = member(l);
        }
        List<Object> renewed;
        try {
            renewed = run(Scripts.RENEW, ScriptOutputType.MULTI, "renewal of " + list.size() + " lease(s)", keys, args);
        } catch (RedisException e) {
            throw failed("renewal of " + list.size() + " lease(s)", e);
        }
        // pairs: the index of a renewed grant, the ms it had left before this renewal
        Map<LeaseKey, Duration> out = new HashMap<>();
        for (int i = 0; i + 1 < renewed.size(); i += 2) {
            out.put(list.get(((Long) renewed.get(i)).intValue() - 1), Duration.ofMillis((Long) renewed.get(i + 1)));
        }
        return out;
    }

    @Override
    public boolean confirm(LeaseKey lease) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, lease.name());
        String what = "check of '" + lease.name() + "'";
        try {
            Long n = run(Scripts.CONFIRM, ScriptOutputType.INTEGER, what, new String[] {keyOf(k, lease.mode())},
                    lease.mode() == LockMode.READ ? "z" : "s", member(lease));
            return n != null && n == 1L;
        } catch (RedisException e) {
            throw failed(what, e);
        }
    }

    // ---- introspection -----------------------------------------------------------------------------------------

    /**
     * Every exclusive and write grant under the prefix, and every exclusive lock with a line: held ones with their
     * line (in order, expired places dropped first by {@link Scripts#LINE}), free ones kept for a waiter with
     * {@code held} false, the last token (from the counter) and their line. Writers' claims are not shown.
     */
    @Override
    public List<LockInfo> inspect() {
        List<LockInfo> out = new ArrayList<>();
        try {
            List<String> time = commands.time();
            long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
            ScanArgs args = ScanArgs.Builder.matches(prefix + "{*}:[xwq]").limit(500);
            ScanCursor cursor = ScanCursor.INITIAL;
            record Grant(LockInfo info, boolean exclusive) {
            }
            List<Grant> grants = new ArrayList<>();
            Set<String> withLine = new LinkedHashSet<>();
            do {
                KeyScanCursor<String> page = commands.scan(cursor, args);
                for (String key : page.getKeys()) {
                    String name = RedisKeys.nameOf(prefix, key);
                    if (name != null && key.endsWith(":q")) {
                        withLine.add(name);
                        continue;
                    }
                    String v = name == null ? null : commands.get(key);
                    if (v == null) {
                        continue;
                    }
                    long pttl = commands.pttl(key);
                    String[] parts = v.split("\\|", 3);
                    if (parts.length < 3 || !parts[0].matches("\\d{1,18}") || !parts[1].matches("\\d{1,18}")) {
                        log.debug("skipping key {}: not a Baton grant ({})", key, v);
                        continue;
                    }
                    grants.add(new Grant(new LockInfo(name, parts[2], Long.parseLong(parts[0]),
                            Instant.ofEpochMilli(Long.parseLong(parts[1])),
                            pttl >= 0 ? Instant.ofEpochMilli(nowMs + pttl) : null, pttl != -2), key.endsWith(":x")));
                }
                cursor = page;
            } while (!cursor.isFinished());
            Set<String> exclusiveHeld = new HashSet<>();
            for (Grant grant : grants) {
                LockInfo g = grant.info();
                List<LockInfo.Waiter> line = grant.exclusive() && withLine.contains(g.name()) ? line(g.name())
                        : List.of();
                if (grant.exclusive()) {
                    exclusiveHeld.add(g.name());
                }
                out.add(new LockInfo(g.name(), g.holder(), g.fencingToken(), g.acquiredAt(), g.expiresAt(), g.held(),
                        line));
            }
            for (String name : withLine) {
                if (exclusiveHeld.contains(name)) {
                    continue;
                }
                List<LockInfo.Waiter> line = line(name);
                if (line.isEmpty()) {
                    continue;
                }
                String counter = commands.get(RedisKeys.Lock.of(prefix, name).counter());
                long token = counter != null && counter.matches("\\d{1,18}") ? Long.parseLong(counter) : -1;
                out.add(new LockInfo(name, null, token, null, null, false, line));
            }
        } catch (RedisException e) {
            throw failed("listing the locks under " + prefix, e);
        }
        return out;
    }

    /** The line of {@code name}, in order, after {@link Scripts#LINE} dropped its expired places. */
    private List<LockInfo.Waiter> line(String name) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, name);
        List<Object> r = run(Scripts.LINE, ScriptOutputType.MULTI, "reading the line of '" + name + "'",
                new String[] {k.line(), k.lineExpiry()});
        List<LockInfo.Waiter> line = new ArrayList<>();
        for (int i = 1; i + 2 < r.size(); i += 3) {
            long arrivalUs = (long) Double.parseDouble((String) r.get(i + 1));
            long expiryMs = (long) Double.parseDouble((String) r.get(i + 2));
            line.add(new LockInfo.Waiter((String) r.get(i),
                    Instant.ofEpochSecond(arrivalUs / 1_000_000, (arrivalUs % 1_000_000) * 1000),
                    Instant.ofEpochMilli(expiryMs)));
        }
        return line;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ScheduledExecutorService beat = heartbeat;
        if (beat != null) {
            beat.shutdownNow();
        }
        for (Place p : List.copyOf(places)) {
            places.remove(p);
            try {
                withdraw(p);
            } catch (RuntimeException e) {
                log.debug("withdrawing the place of '{}' at close failed; it expires within {} ms", p.name(),
                        PLACE_TTL.toMillis(), e);
            }
        }
        try {
            pubSub.close();
        } finally {
            try {
                connection.close();
            } finally {
                if (ownsClient) {
                    shutdownOwnClient();
                }
            }
        }
    }

    /** Shuts down a client this backend created, with the resources it was created with. */
    private void shutdownOwnClient() {
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        } finally {
            // created with resources of its own (a bounded reconnect delay), which its shutdown leaves open
            client.getResources().shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    /**
     * The few commands sent outside scripts, each waited for as Lettuce's synchronous API waits: at most the
     * command timeout, then cancelled ({@link io.lettuce.core.RedisCommandTimeoutException}); an interrupt ends
     * the wait ({@link io.lettuce.core.RedisCommandInterruptedException}, the flag set again); a server error is
     * thrown as it came. Through the asynchronous API because the synchronous one is slow to build
     * ({@link AsyncOnlyRedisClient}).
     */
    static final class Commands {
        private final RedisAsyncCommands<String, String> async;
        private final Duration timeout;

        Commands(RedisAsyncCommands<String, String> async, Duration timeout) {
            this.async = async;
            this.timeout = timeout;
        }

        static <T> T await(RedisFuture<T> future, Duration timeout) {
            return LettuceFutures.awaitOrCancel(future, timeout.toNanos(), TimeUnit.NANOSECONDS);
        }

        String clientSetname(String name) {
            return await(async.clientSetname(name), timeout);
        }

        String info(String section) {
            return await(async.info(section), timeout);
        }

        String get(String key) {
            return await(async.get(key), timeout);
        }

        Long pttl(String key) {
            return await(async.pttl(key), timeout);
        }

        Double zscore(String key, String member) {
            return await(async.zscore(key, member), timeout);
        }

        List<String> time() {
            return await(async.time(), timeout);
        }

        KeyScanCursor<String> scan(ScanCursor cursor, ScanArgs args) {
            return await(async.scan(cursor, args), timeout);
        }
    }
}
