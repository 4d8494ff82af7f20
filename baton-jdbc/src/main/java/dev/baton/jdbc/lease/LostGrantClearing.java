package dev.baton.jdbc.lease;

import dev.baton.spi.LeaseKey;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Where the grants the core declared lost are cleared ({@link JdbcLeaseBackend#lost}), one at a time, in the order
 * they were lost: one daemon thread, started with the first lost grant and ended after a minute idle, so the core's
 * renewer and watchdog threads never wait on the database. A clearing that fails is logged at DEBUG (under
 * {@link JdbcLeaseBackend}'s logger) and left to the row's lease.
 */
final class LostGrantClearing {
    private static final Logger LOG = LoggerFactory.getLogger(JdbcLeaseBackend.class);

    private final ThreadPoolExecutor clearing = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "baton-jdbc-clear-lost");
                t.setDaemon(true);
                return t;
            });
    /** Ends one grant (the backend's owner- and token-checked release). */
    private final Predicate<LeaseKey> release;

    LostGrantClearing(Predicate<LeaseKey> release) {
        this.release = release;
        clearing.allowCoreThreadTimeOut(true);
    }

    /** Releases {@code lease} in the background; closing, nothing (the row ends with its lease). */
    void clear(LeaseKey lease) {
        try {
            clearing.execute(() -> {
                try {
                    release.test(lease);
                } catch (RuntimeException e) {
                    LOG.debug("clearing lost grant '{}' (token {}) failed; its row ends with its lease", lease.name(),
                            lease.token(), e);
                }
            });
        } catch (RejectedExecutionException e) {
            // closing: the row ends with its lease
        }
    }

    /** Grants already being cleared are cleared (the pool permitting); none is taken on after. */
    void shutdown() {
        clearing.shutdown();
    }
}
