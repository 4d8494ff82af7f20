package dev.baton.redis;

import java.util.regex.Pattern;

/**
 * Where one lock lives under a key prefix. Every key and the channel of lock {@code name} start with
 * {@code <prefix>{<name>}}: the name is the hash tag, so all of one lock's keys are in one slot on a Redis Cluster
 * and each script touches one slot. In the tag, {@code %} is written {@code %25} and <code>}</code> is written
 * {@code %7D}, so any name is a tag of its own (a name containing <code>}</code> would otherwise cut the tag short,
 * and an empty tag would spread the keys over slots).
 */
final class RedisKeys {
    /** The default key prefix. */
    static final String DEFAULT_PREFIX = "baton:";
    static final int MAX_PREFIX = 64;
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9:_.\\-]+");

    private RedisKeys() {
    }

    /** Validates a key prefix: 1-64 letters, digits, {@code : _ . -}. */
    static String validatePrefix(String prefix) {
        if (prefix == null || prefix.isEmpty()) {
            throw new IllegalArgumentException("keyPrefix must not be null or empty");
        }
        if (prefix.length() > MAX_PREFIX) {
            throw new IllegalArgumentException("keyPrefix '" + prefix.substring(0, 20) + "…' is " + prefix.length()
                    + " characters; at most " + MAX_PREFIX);
        }
        if (!PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("keyPrefix '" + prefix + "' is not allowed: use letters, digits and"
                    + " ': _ . -' only (no braces: the lock name is each key's hash tag; no spaces or glob"
                    + " characters: the prefix is matched by SCAN and PSUBSCRIBE patterns)");
        }
        return prefix;
    }

    static String escape(String name) {
        if (name.indexOf('%') < 0 && name.indexOf('}') < 0) {
            return name;
        }
        return name.replace("%", "%25").replace("}", "%7D");
    }

    static String unescape(String tag) {
        if (tag.indexOf('%') < 0) {
            return tag;
        }
        return tag.replace("%7D", "}").replace("%25", "%");
    }

    /** The keys and channel of one lock. */
    record Lock(String base) {
        static Lock of(String prefix, String name) {
            return new Lock(prefix + "{" + escape(name) + "}");
        }

        /** The exclusive grant: {@code <token>|<granted ms>|<owner>}, with the lease as its expiry. */
        String exclusive() {
            return base + ":x";
        }

        /**
         * The token counter, shared by the lock's exclusive, read and write grants; it expires
         * {@code tokenCounterExpiry} after the lock's last grant.
         */
        String counter() {
            return base + ":t";
        }

        /** The line of waiters for the exclusive lock, scored by arrival (µs). */
        String line() {
            return base + ":q";
        }

        /** When each waiter's place expires (ms, server clock). */
        String lineExpiry() {
            return base + ":qx";
        }

        /** The write grant of the read-write lock. */
        String writer() {
            return base + ":w";
        }

        /** The read grants: members {@code <token>|<owner>} scored by their expiry (ms). */
        String readers() {
            return base + ":r";
        }

        /** Waiting writers' claims, scored by their expiry (ms): each holds back new readers. */
        String writerClaims() {
            return base + ":wq";
        }

        /** The channel releases are published on; the message is the lock name. */
        String channel() {
            return base + ":released";
        }
    }

    /** The pattern of every lock's release channel under the prefix. */
    static String channelPattern(String prefix) {
        return prefix + "{*}:released";
    }

    /**
     * The lock name of a grant key ({@code <prefix>{<tag>}:x} or {@code :w}) or of a line ({@code :q}), or null if it
     * is not one.
     */
    static String nameOf(String prefix, String key) {
        if (!key.startsWith(prefix + "{") || !(key.endsWith("}:x") || key.endsWith("}:w") || key.endsWith("}:q"))) {
            return null;
        }
        return unescape(key.substring(prefix.length() + 1, key.length() - 3));
    }
}
