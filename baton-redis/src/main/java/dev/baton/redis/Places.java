package dev.baton.redis;

import dev.baton.spi.AcquireRequest;
import dev.baton.spi.LockMode;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The waiting side of one backend ({@link dev.baton.spi.WaitingQueue}): the places in line this client keeps on the
 * server (a waiter's place in an exclusive lock's line, a waiting writer's claim), their heartbeat — every place
 * renewed in one script ({@link Scripts#KEEP_PLACES}) every {@link RedisLockBackend#HEARTBEAT_INTERVAL}, on a thread
 * of its own — and their withdrawal: one on the core's word, or every place when the client closes.
 */
final class Places {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    private final Calls calls;
    private final String prefix;
    private final String description;
    /** Places in line this client keeps on the server, withdrawn at close. */
    private final Set<Place> places = ConcurrentHashMap.newKeySet();
    /** Runs the heartbeat of this client's places; started by {@link #startHeartbeat}. */
    private volatile ScheduledExecutorService heartbeat;
    private volatile boolean closed;

    Places(Calls calls, String prefix) {
        this.calls = calls;
        this.prefix = prefix;
        this.description = calls.description();
    }

    /** Keeps the place of a waiter that was told busy (renewed by the heartbeat, withdrawn at close). */
    void add(Place place) {
        places.add(place);
    }

    /** Forgets a place (granted, refused, or its outcome unknown): the server's script took care of it, or will. */
    boolean remove(Place place) {
        return places.remove(place);
    }

    boolean contains(Place place) {
        return places.contains(place);
    }

    /** Starts the heartbeat thread, whose first beat runs one {@link RedisLockBackend#HEARTBEAT_INTERVAL} later. */
    void startHeartbeat(String clientId) {
        ScheduledExecutorService beat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "baton-redis-places " + clientId);
            t.setDaemon(true);
            return t;
        });
        heartbeat = beat;
        beat.schedule(this::keepPlaces, RedisLockBackend.HEARTBEAT_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The heartbeat's thread, which also runs the backend's other background work; null before the start. */
    ScheduledExecutorService heartbeat() {
        return heartbeat;
    }

    void withdraw(AcquireRequest request) {
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
            calls.run(Scripts.WITHDRAW, ScriptOutputType.INTEGER, "withdrawal from the line of '" + place.name() + "'",
                    keys, place.owner(), k.channel(), place.name());
        } catch (RedisException e) {
            throw calls.failed("withdrawal from the line of '" + place.name() + "'", e);
        }
    }

    /**
     * One heartbeat: renews every place this client keeps in one script, then schedules the next one
     * {@link RedisLockBackend#HEARTBEAT_INTERVAL} after this one started, or sooner, just after the place at the head
     * of a free lock's line expires (so that, if its waiter is dead, the script removes it and publishes the next head
     * at once). Heartbeat thread. A failure is logged and the next beat tries again: places then live
     * {@link RedisLockBackend#PLACE_TTL} after the last heartbeat that got through.
     */
    private void keepPlaces() {
        if (closed) {
            return;
        }
        long started = System.nanoTime();
        long next = RedisLockBackend.HEARTBEAT_INTERVAL.toMillis();
        try {
            List<Place> list = List.copyOf(places);
            if (!list.isEmpty()) {
                String[] keys = new String[3 * list.size()];
                String[] args = new String[1 + 3 * list.size()];
                args[0] = RedisLockBackend.PLACE_TTL_MS;
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
                List<Object> r = calls.run(Scripts.KEEP_PLACES, ScriptOutputType.MULTI,
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

    /** Stops the heartbeat and withdraws every place; a place whose withdrawal fails expires on its own. */
    void close() {
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
                        RedisLockBackend.PLACE_TTL.toMillis(), e);
            }
        }
    }
}
