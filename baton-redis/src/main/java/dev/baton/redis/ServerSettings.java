package dev.baton.redis;

import dev.baton.LockBackendException;
import dev.baton.LockConfigurationException;
import io.lettuce.core.RedisException;

import java.util.HashMap;
import java.util.Map;

/**
 * The check at {@code build()} of the server settings Baton's guarantees depend on: no Redis Cluster node, and no
 * eviction of lock keys (unless the builder accepts it). Reads {@code INFO}, which works where {@code CONFIG} is
 * disabled.
 */
final class ServerSettings {
    private final Calls calls;
    private final String description;

    ServerSettings(Calls calls) {
        this.calls = calls;
        this.description = calls.description();
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
    void check(boolean allowEviction) {
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
            text = calls.commands().info(section);
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
}
