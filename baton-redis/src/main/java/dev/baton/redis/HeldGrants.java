package dev.baton.redis;

import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What is done with a grant once granted, each step owner- and token-checked on the server: release (which hands a
 * free exclusive lock to the head of its line), renewal of every lease in one script with the time each grant had
 * left, the exact check, and the clearing of a grant the core declared lost. A grant is named on the server by its
 * lock's key for the mode and its member {@code <token>|<owner>}.
 */
final class HeldGrants {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    private final Calls calls;
    private final String prefix;

    HeldGrants(Calls calls, String prefix) {
        this.calls = calls;
        this.prefix = prefix;
    }

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

    boolean release(LeaseKey lease) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, lease.name());
        String what = "release of '" + lease.name() + "'";
        try {
            Long n = lease.mode() == LockMode.READ
                    ? calls.run(Scripts.RELEASE_READ, ScriptOutputType.INTEGER, what, new String[] {k.readers()},
                            member(lease), k.channel(), lease.name())
                    : calls.run(Scripts.RELEASE, ScriptOutputType.INTEGER, what,
                            new String[] {keyOf(k, lease.mode()), k.line(), k.lineExpiry()},
                            lease.owner(), Long.toString(lease.token()), k.channel(), lease.name(),
                            lease.mode() == LockMode.WRITE ? "1" : "0");
            return n != null && n == 1L;
        } catch (RedisException e) {
            throw calls.failed(what, e);
        }
    }

    /**
     * A grant the core declared lost (its renewal found less time left than the client counted on, or its deadline
     * passed): its key may live on for a whole lease, held by nobody. Sent in the background (on {@code beat}, the
     * heartbeat's thread, once started) with the holder's own release script, which deletes the key only if it still
     * holds this owner and token (never a later holder's), and hands the lock to the head of its line. If Redis cannot
     * be reached, the key ends with its expiry.
     */
    void lost(LeaseKey lease, ScheduledExecutorService beat) {
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
        } catch (RejectedExecutionException e) {
            // closing: the key ends with its expiry
        }
    }

    /** Renews every lease in one script; each renewed one with the time its grant had left before this renewal. */
    Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime) {
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
            renewed = calls.run(Scripts.RENEW, ScriptOutputType.MULTI, "renewal of " + list.size() + " lease(s)", keys,
                    args);
        } catch (RedisException e) {
            throw calls.failed("renewal of " + list.size() + " lease(s)", e);
        }
        // pairs: the index of a renewed grant, the ms it had left before this renewal
        Map<LeaseKey, Duration> out = new HashMap<>();
        for (int i = 0; i + 1 < renewed.size(); i += 2) {
            out.put(list.get(((Long) renewed.get(i)).intValue() - 1), Duration.ofMillis((Long) renewed.get(i + 1)));
        }
        return out;
    }

    boolean confirm(LeaseKey lease) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, lease.name());
        String what = "check of '" + lease.name() + "'";
        try {
            Long n = calls.run(Scripts.CONFIRM, ScriptOutputType.INTEGER, what, new String[] {keyOf(k, lease.mode())},
                    lease.mode() == LockMode.READ ? "z" : "s", member(lease));
            return n != null && n == 1L;
        } catch (RedisException e) {
            throw calls.failed(what, e);
        }
    }
}
