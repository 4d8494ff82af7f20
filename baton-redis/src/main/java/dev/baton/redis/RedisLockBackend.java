package dev.baton.redis;

import dev.baton.ForcedRelease;
import dev.baton.LockBackendException;
import dev.baton.LockConfigurationException;
import dev.baton.LockInfo;
import dev.baton.NothingGrantedException;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.Causes;
import dev.baton.spi.ClearsLostGrants;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsTimeLeft;
import dev.baton.spi.WaitingQueue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 *
 * <p><b>Parts.</b> This class is the acquisition ({@link #tryAcquire}: the token floor, the grant, a refusal told
 * from an unknown outcome, the wait for replicas) and the SPI's entry points; the rest is package-private, one
 * concern each: {@link Scripts} (the Lua scripts), {@link Calls} (running them, bounded waits, failures) and
 * {@link Commands} (the few commands outside scripts), {@link ServerSettings} (the check at {@code build()}),
 * {@link Places} and {@link Place} (places in line, their heartbeat and withdrawal), {@link ReleaseMessages}
 * (pub/sub wake-ups), {@link Cleanups} (clean-ups after an unknown outcome), {@link HeldGrants} (release, renewal,
 * check, clearing a lost grant), {@link Inspection} (list, forced release, removal from a line), {@link SeenTokens}
 * (the token floor) and {@link RedisKeys} (key names). Every part logs under this class's category.
 */
final class RedisLockBackend implements NotifiesReleases, ConfirmsGrants, ReadWriteModes, WaitingQueue,
        ReportsTimeLeft, ClearsLostGrants {
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);
    /**
     * How long a place in line (or a writer's claim) lives after its client's last heartbeat or attempt: what a dead
     * waiter can cost the next one. One second is the target, and leaves a live client three missed
     * heartbeats (750 ms of stall) before its waiters lose their places.
     */
    static final Duration PLACE_TTL = Duration.ofSeconds(1);
    /** How often a client renews every place it keeps ({@link Scripts#KEEP_PLACES}): a quarter of the expiry. */
    static final Duration HEARTBEAT_INTERVAL = PLACE_TTL.dividedBy(4);
    static final String PLACE_TTL_MS = Long.toString(PLACE_TTL.toMillis());

    private final RedisClient client;
    private final boolean ownsClient;
    private final String prefix;
    private final String description;
    private final Calls calls;
    private final ServerSettings settings;
    private final Places places;
    private final ReleaseMessages messages;
    private final Cleanups cleanups;
    private final HeldGrants held;
    private final Inspection inspection;
    private final int replicas;
    private final Duration replicaTimeout;
    private final String counterExpiry;
    private final SeenTokens seen = new SeenTokens();
    private volatile boolean closed;

    RedisLockBackend(RedisClient client, boolean ownsClient, String prefix, Duration commandTimeout,
                     String endpoint, int replicas, Duration replicaTimeout, Duration counterExpiry) {
        this.client = client;
        this.counterExpiry = Long.toString(counterExpiry.toMillis());
        this.replicas = replicas;
        this.replicaTimeout = replicaTimeout;
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
                throw new LockBackendException(description, "cannot connect to Redis: " + connectFailure(e), e);
            }
            throw e;
        }
        this.calls = new Calls(c, description, commandTimeout);
        this.settings = new ServerSettings(calls);
        this.places = new Places(calls, prefix);
        this.messages = new ReleaseMessages(p, places, prefix, description, commandTimeout);
        this.cleanups = new Cleanups(calls);
        this.held = new HeldGrants(calls, prefix);
        this.inspection = new Inspection(calls, held, prefix);
    }

    /** A Sentinel's address in Lettuce's "Cannot connect Redis Sentinel at redis://[***@]host:port" (masked). */
    private static final Pattern SENTINEL_AT = Pattern.compile("Redis Sentinel at [a-z+-]+://(?:[^@\\s]*@)?(\\S+)");

    /**
     * What a failed connect says, in words: a Sentinel that refused this client's credentials or asked for some is
     * named (Lettuce reports the last Sentinel it tried as the cause) with the URL parameter to fix; anything else
     * is Lettuce's message. Lettuce masks passwords in the addresses it prints; none is added here.
     */
    static String connectFailure(Throwable e) {
        String sentinel = null;
        for (Throwable t : Causes.chain(e)) {
            String m = String.valueOf(t.getMessage());
            Matcher at = SENTINEL_AT.matcher(m);
            if (at.find()) {
                sentinel = at.group(1);
            }
            if (sentinel != null && t instanceof RedisCommandExecutionException) {
                String reply = m.length() > 200 ? m.substring(0, 200) + "…" : m;
                if (m.startsWith("WRONGPASS") || m.startsWith("ERR invalid password")) {
                    return "authentication failed at the Sentinel " + sentinel + " (the last of the URL's Sentinels"
                            + " tried): it refused the URL's sentinelPassword (" + reply + ")";
                }
                if (m.startsWith("NOAUTH")) {
                    return "the Sentinel " + sentinel + " (the last of the URL's Sentinels tried) asks for a password"
                            + " and the URL gives it none: add the Sentinels' password as the sentinelPassword"
                            + " parameter (redis-sentinel://…?sentinelPassword=…#master); authentication failed ("
                            + reply + ")";
                }
                if (m.startsWith("ERR AUTH") || m.contains("without any password configured")) {
                    return "the Sentinel " + sentinel + " (the last of the URL's Sentinels tried) has no password but"
                            + " the URL gives one: leave sentinelPassword out; authentication failed (" + reply + ")";
                }
            }
        }
        return e.getMessage();
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void listen(ReleaseListener listener) {
        messages.listen(listener);
    }

    @Override
    public void start(String clientId) {
        String name = connectionName(clientId);
        try {
            calls.commands().clientSetname(name);
            messages.subscribe(name);
            places.startHeartbeat(clientId);
        } catch (RedisException e) {
            close();
            throw new LockBackendException(description, "cannot set up the client's connections: " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a server Baton cannot keep its promises on ({@link ServerSettings#check}).
     *
     * @throws LockConfigurationException naming the setting, its value and the way out
     * @throws LockBackendException       if the server's settings could not be read
     */
    void checkServer(boolean allowEviction) {
        settings.check(allowEviction);
    }

    /** {@code baton:<client id>}, with anything CLIENT SETNAME refuses (spaces, control characters) as '_'. */
    static String connectionName(String clientId) {
        StringBuilder sb = new StringBuilder("baton:");
        clientId.codePoints().forEach(cp -> sb.append(cp > 32 && cp < 127 ? (char) cp : '_'));
        return sb.toString();
    }

    // ---- acquire --------------------------------------------------------------------------------------------

    /**
     * One attempt, in steps: (1) refused at once while the connection is down; (2) a clean-up still pending for
     * this lock, mode and owner is sent first ({@link Cleanups#sendPending}); (3) one acquire script for the mode,
     * with the highest token this client saw for the lock as the floor of the next ({@link SeenTokens}); a failure
     * is a refusal when it says for sure that nothing was granted ({@link #definiteRefusal}), else an unknown
     * outcome whose possible grant is cleaned up ({@link Cleanups#abandon}); (4) granted: the place is forgotten,
     * a token raised above the floor is reported, and the grant waits for the required replicas; busy: a waiter
     * keeps its place ({@link Places}), and the answer names the holder, its token and its time left.
     */
    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, request.name());
        String lease = Long.toString(Math.max(1, request.leaseTime().toMillis()));
        boolean waits = request.patience() == AcquireRequest.Patience.WAIT;
        String wait = waits ? "1" : "0";
        if (!calls.isOpen()) {
            throw new NothingGrantedException(description, "acquire of '" + request.name() + "' was not sent: the"
                    + " connection to Redis is down (reconnecting) and lock commands are not queued while"
                    + " disconnected; nothing was granted", null);
        }
        cleanups.sendPending(request);
        long floor = seen.highest(request.name());
        String seenToken = Long.toString(floor);
        Place place = new Place(request.name(), request.mode(), request.owner());
        List<Object> r;
        try {
            r = switch (request.mode()) {
                case EXCLUSIVE -> calls.run(Scripts.ACQUIRE, ScriptOutputType.MULTI,
                        "acquire of '" + request.name() + "'",
                        new String[] {k.exclusive(), k.counter(), k.line(), k.lineExpiry()}, request.owner(), lease,
                        wait, seenToken, counterExpiry, PLACE_TTL_MS);
                case READ -> calls.run(Scripts.ACQUIRE_READ, ScriptOutputType.MULTI,
                        "read acquire of '" + request.name() + "'",
                        new String[] {k.writer(), k.readers(), k.counter(), k.writerClaims()}, request.owner(), lease,
                        seenToken, counterExpiry);
                case WRITE -> calls.run(Scripts.ACQUIRE_WRITE, ScriptOutputType.MULTI,
                        "write acquire of '" + request.name() + "'",
                        new String[] {k.writer(), k.readers(), k.counter(), k.writerClaims()}, request.owner(), lease,
                        wait, seenToken, counterExpiry, PLACE_TTL_MS);
            };
        } catch (RedisException e) {
            String refusal = definiteRefusal(e);
            if (refusal != null) {
                places.remove(place);
                throw new NothingGrantedException(description, "acquire of '" + request.name() + "' " + refusal, e);
            }
            // a timeout or a dropped connection: the script may have run. Undo whatever it granted this owner.
            places.remove(place);
            cleanups.abandon(request, k);
            throw new LockBackendException(description, "acquire of '" + request.name() + "' has an unknown outcome ("
                    + e.getMessage() + "); a grant it may have made is deleted by an owner-checked clean-up, sent now"
                    + " or, if Redis cannot be reached, once the connection is back (until that grant's lease would"
                    + " end)", e);
        }
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
            acked = calls.await(calls.async().waitForReplication(replicas, Math.max(1, replicaTimeout.toMillis())),
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
            held.release(new LeaseKey(request.name(), request.owner(), token, request.mode()));
        } catch (RuntimeException e) {
            log.warn("could not give back the grant of '{}' (token {}); it ends within its lease", request.name(),
                    token, e);
        }
    }

    @Override
    public void withdraw(AcquireRequest request) {
        places.withdraw(request);
    }

    // ---- release, renew, confirm ------------------------------------------------------------------------------

    @Override
    public boolean release(LeaseKey lease) {
        return held.release(lease);
    }

    @Override
    public void lost(LeaseKey lease) {
        held.lost(lease, places.heartbeat());
    }

    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        return renewReportingTimeLeft(leases, leaseTime).keySet();
    }

    @Override
    public Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime) {
        return held.renewReportingTimeLeft(leases, leaseTime);
    }

    @Override
    public boolean confirm(LeaseKey lease) {
        return held.confirm(lease);
    }

    // ---- introspection -----------------------------------------------------------------------------------------

    @Override
    public List<LockInfo> inspect() {
        return inspection.inspect();
    }

    /** {@link Inspection#forceRelease}. */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        return inspection.forceRelease(name, token);
    }

    /** {@link Inspection#removeFromLine}. */
    Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
        return inspection.removeFromLine(name, owner);
    }

    /**
     * Stops the clean-ups and the heartbeat, withdraws every place this client keeps, then closes the pub/sub and
     * command connections (and the client, if this backend made it).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        cleanups.close();
        places.close();
        try {
            messages.close();
        } finally {
            try {
                calls.close();
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
}
