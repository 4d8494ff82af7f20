package dev.baton.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Redis URL with Baton's own query parameters ({@code requireReplicas}, {@code replicaTimeout}) taken out: what is
 * left is given to Lettuce.
 *
 * @param lettuceUrl     the URL without Baton's parameters
 * @param replicas       {@code requireReplicas}, 0 if absent
 * @param replicaTimeout {@code replicaTimeout}, or the default
 * @param hasTimeout     whether the URL sets Lettuce's {@code timeout}
 */
record RedisUrl(String lettuceUrl, int replicas, Duration replicaTimeout, boolean hasTimeout) {
    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s)");

    static RedisUrl parse(String url) {
        int hash = url.indexOf('#');
        String fragment = hash >= 0 ? url.substring(hash) : "";
        String rest = hash >= 0 ? url.substring(0, hash) : url;
        int q = rest.indexOf('?');
        if (q < 0) {
            return new RedisUrl(url, 0, Duration.ofMillis(RedisLocks.DEFAULT_REPLICA_TIMEOUT_MS), false);
        }
        int replicas = 0;
        Duration timeout = Duration.ofMillis(RedisLocks.DEFAULT_REPLICA_TIMEOUT_MS);
        List<String> kept = new ArrayList<>();
        boolean hasTimeout = false;
        for (String pair : rest.substring(q + 1).split("&")) {
            int eq = pair.indexOf('=');
            String name = eq >= 0 ? pair.substring(0, eq) : pair;
            String value = eq >= 0 ? pair.substring(eq + 1) : "";
            if (name.equals("requireReplicas")) {
                try {
                    replicas = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("requireReplicas: a number of replicas (0 to 16), was '" + value
                            + "'", e);
                }
            } else if (name.equals("replicaTimeout")) {
                Matcher m = DURATION.matcher(value);
                if (!m.matches()) {
                    throw new IllegalArgumentException("replicaTimeout: <n>ms or <n>s, was '" + value + "'");
                }
                long n = Long.parseLong(m.group(1));
                timeout = m.group(2).equals("s") ? Duration.ofSeconds(n) : Duration.ofMillis(n);
            } else if (!pair.isEmpty()) {
                hasTimeout |= name.equals("timeout");
                kept.add(pair);
            }
        }
        String base = rest.substring(0, q) + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
        return new RedisUrl(base + fragment, replicas, timeout, hasTimeout);
    }
}
