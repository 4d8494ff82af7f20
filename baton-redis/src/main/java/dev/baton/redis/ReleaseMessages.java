package dev.baton.redis;

import dev.baton.spi.LockMode;
import dev.baton.spi.ReleaseListener;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The wake-ups of one backend ({@link dev.baton.spi.NotifiesReleases}): its pub/sub connection, subscribed to the
 * release channel of every lock under the prefix, and which of this client's waiters a message wakes. A message that
 * names the head of a lock's line wakes only that waiter, if it is this client's; a message without a head wakes
 * every waiter of the lock. A subscription Lettuce made again after a reconnect makes every waiter retry: releases
 * published meanwhile were lost.
 */
final class ReleaseMessages {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final Places places;
    private final String prefix;
    private final String description;
    private final Duration commandTimeout;
    private final AtomicBoolean subscribedOnce = new AtomicBoolean();
    private volatile ReleaseListener listener;

    ReleaseMessages(StatefulRedisPubSubConnection<String, String> pubSub, Places places, String prefix,
                    String description, Duration commandTimeout) {
        this.pubSub = pubSub;
        this.places = places;
        this.prefix = prefix;
        this.description = description;
        this.commandTimeout = commandTimeout;
    }

    void listen(ReleaseListener listener) {
        this.listener = listener;
    }

    /**
     * Names the pub/sub connection {@code connectionName} and subscribes it to the release channels of every lock
     * under the prefix.
     *
     * @throws io.lettuce.core.RedisException if Redis refused or did not answer in the command timeout
     */
    void subscribe(String connectionName) {
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
        Commands.await(pubSub.async().clientSetname(connectionName), commandTimeout);
        Commands.await(pubSub.async().psubscribe(RedisKeys.channelPattern(prefix)), commandTimeout);
    }

    /** Closes the pub/sub connection. */
    void close() {
        pubSub.close();
    }
}
