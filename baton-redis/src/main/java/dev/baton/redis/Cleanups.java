package dev.baton.redis;

import dev.baton.NothingGrantedException;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.LockMode;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The clean-ups of acquires with an unknown outcome (a timeout or a dropped connection: the script may have run):
 * an owner-checked delete ({@link Scripts#ABANDON}) of whatever the acquire may have granted, sent at once without
 * waiting, and retried in the background while it cannot reach Redis, until one gets through or the lease a late
 * grant would have has passed. An acquire of the same lock, mode and owner takes its clean-up over and sends it
 * first, in order on the same connection, so a retry can never delete the later grant.
 */
final class Cleanups {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    private final Calls calls;
    private final String description;
    /**
     * Clean-ups that have not reached Redis yet (the connection was down), by the acquire's lock, mode and owner.
     * Guarded by itself, for the hand-over to a later acquire.
     */
    private final Map<Place, Cleanup> cleanups = new HashMap<>();
    private volatile boolean closed;

    private record Cleanup(String[] keys, String[] args, long untilNanos) {
    }

    Cleanups(Calls calls) {
        this.calls = calls;
        this.description = calls.description();
    }

    /**
     * The owner-checked delete after an acquire whose outcome is unknown; sent without waiting for it, and retried
     * (after a reconnect) while it cannot reach Redis.
     */
    void abandon(AcquireRequest request, RedisKeys.Lock k) {
        Place place = new Place(request.name(), request.mode(), request.owner());
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
            sent = calls.async().eval(Scripts.ABANDON.body(), ScriptOutputType.INTEGER, cleanup.keys(),
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
     *
     * @throws NothingGrantedException if that clean-up could not be sent or failed: the acquire is not sent either
     */
    void sendPending(AcquireRequest request) {
        Place place = new Place(request.name(), request.mode(), request.owner());
        RedisFuture<Long> sent;
        synchronized (cleanups) {
            Cleanup cleanup = cleanups.remove(place);
            if (cleanup == null) {
                return;
            }
            if (!calls.isOpen()) {
                cleanups.put(place, cleanup);
                throw new NothingGrantedException(description, "acquire of '" + request.name() + "' was not sent: the"
                        + " connection to Redis is down (reconnecting), and the clean-up of an earlier acquire with"
                        + " an unknown outcome is still to be sent", null);
            }
            sent = calls.async().eval(Scripts.ABANDON.body(), ScriptOutputType.INTEGER, cleanup.keys(),
                    cleanup.args());
        }
        try {
            calls.await(sent, "clean-up of an earlier acquire of '" + request.name() + "'");
        } catch (RedisException e) {
            throw new NothingGrantedException(description, "acquire of '" + request.name() + "' was not sent: the"
                    + " clean-up of an earlier acquire with an unknown outcome failed (" + e.getMessage() + ")", e);
        }
    }

    /** No clean-up is sent or retried from now on: a grant it would have deleted ends within its lease. */
    void close() {
        closed = true;
    }
}
