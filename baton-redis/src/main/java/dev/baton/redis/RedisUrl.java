package dev.baton.redis;

import io.lettuce.core.RedisURI;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Redis URL with Baton's own query parameters ({@code requireReplicas}, {@code replicaTimeout},
 * {@code sentinelPassword}) taken out: what is left is given to Lettuce.
 *
 * @param lettuceUrl       the URL without Baton's parameters
 * @param replicas         {@code requireReplicas}, 0 if absent
 * @param replicaTimeout   {@code replicaTimeout}, or the default
 * @param hasTimeout       whether the URL sets Lettuce's {@code timeout}
 * @param sentinelPassword {@code sentinelPassword}, percent-decoded: the Sentinels' own password (Lettuce gives the
 *                         URL's user-info to the primary only), or null
 */
record RedisUrl(String lettuceUrl, int replicas, Duration replicaTimeout, boolean hasTimeout, String sentinelPassword) {
    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s)");
    private static final String SENTINEL_SCHEME = "redis-sentinel://";
    private static final String SENTINEL_FORM = "redis-sentinel://[PASSWORD@]HOST:PORT[,HOST:PORT…][/DB]#MASTER";

    static RedisUrl parse(String url) {
        int hash = url.indexOf('#');
        String fragment = hash >= 0 ? url.substring(hash) : "";
        String rest = hash >= 0 ? url.substring(0, hash) : url;
        int q = rest.indexOf('?');
        if (url.regionMatches(true, 0, SENTINEL_SCHEME, 0, SENTINEL_SCHEME.length())) {
            checkSentinelUrl(q < 0 ? rest : rest.substring(0, q), fragment,
                    q >= 0 && ("&" + rest.substring(q + 1)).contains("&sentinelMasterId="));
        }
        if (q < 0) {
            return new RedisUrl(url, 0, Duration.ofMillis(RedisLocks.DEFAULT_REPLICA_TIMEOUT_MS), false, null);
        }
        int replicas = 0;
        Duration timeout = Duration.ofMillis(RedisLocks.DEFAULT_REPLICA_TIMEOUT_MS);
        List<String> kept = new ArrayList<>();
        boolean hasTimeout = false;
        String sentinelPassword = null;
        for (String pair : rest.substring(q + 1).split("&")) {
            int eq = pair.indexOf('=');
            String name = eq >= 0 ? pair.substring(0, eq) : pair;
            String value = eq >= 0 ? pair.substring(eq + 1) : "";
            if (name.equals("requireReplicas")) {
                try {
                    replicas = Integer.parseInt(value);
                    if (replicas < 0) {
                        throw new NumberFormatException("negative");
                    }
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
            } else if (name.equals("sentinelPassword")) {
                if (!url.regionMatches(true, 0, SENTINEL_SCHEME, 0, SENTINEL_SCHEME.length())) {
                    throw new IllegalArgumentException("sentinelPassword: the password of Redis Sentinels, for a"
                            + " redis-sentinel:// URL only (the password of a Redis server goes before '@':"
                            + " redis://PASSWORD@HOST:PORT)");
                }
                if (value.isEmpty()) {
                    throw new IllegalArgumentException("sentinelPassword: empty (leave it out for Sentinels without"
                            + " a password)");
                }
                sentinelPassword = percentDecoded(value);
            } else if (!pair.isEmpty()) {
                hasTimeout |= name.equals("timeout");
                kept.add(pair);
            }
        }
        String base = rest.substring(0, q) + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
        return new RedisUrl(base + fragment, replicas, timeout, hasTimeout, sentinelPassword);
    }

    /** Lettuce's URI of {@link #lettuceUrl}, each Sentinel with {@link #sentinelPassword} if there is one. */
    RedisURI redisUri() {
        RedisURI uri = RedisURI.create(lettuceUrl);
        if (sentinelPassword != null) {
            // Lettuce gives the URL's user-info to the primary only; each Sentinel gets this one
            for (RedisURI sentinel : uri.getSentinels()) {
                sentinel.setAuthentication(sentinelPassword.toCharArray());
            }
        }
        return uri;
    }

    /**
     * What Lettuce would refuse with a sentence that does not say what to write (or accept and ignore): a Sentinel
     * URL without the primary's name, without a Sentinel, with an empty Sentinel address or a database that is not
     * a number. {@code beforeQuery} runs from the scheme to the query string or fragment.
     */
    private static void checkSentinelUrl(String beforeQuery, String fragment, boolean masterIdParameter) {
        if (fragment.length() <= 1 && !masterIdParameter) {
            throw new IllegalArgumentException("a Redis Sentinel URL names the primary its Sentinels watch after '#': "
                    + SENTINEL_FORM);
        }
        String authority = beforeQuery.substring(SENTINEL_SCHEME.length());
        authority = authority.substring(authority.lastIndexOf('@') + 1);
        int slash = authority.indexOf('/');
        String database = slash >= 0 ? authority.substring(slash + 1) : "";
        String hosts = slash >= 0 ? authority.substring(0, slash) : authority;
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a Redis Sentinel URL names at least one Sentinel (HOST:PORT, 26379 if"
                    + " no port) before the database and '#': " + SENTINEL_FORM);
        }
        for (String host : hosts.split(",", -1)) {
            if (host.isEmpty() || host.startsWith(":")) {
                throw new IllegalArgumentException("an empty Sentinel address in '" + hosts + "': Sentinels are"
                        + " HOST:PORT separated by commas, " + SENTINEL_FORM);
            }
        }
        if (!database.isEmpty() && !database.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("database '" + database + "' is not a number: " + SENTINEL_FORM);
        }
    }

    /** {@code %XX} escapes decoded as UTF-8; a {@code +} stays a plus (a password, not a form field). */
    private static String percentDecoded(String value) {
        try {
            return URLDecoder.decode(value.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("sentinelPassword: a '%' not followed by two hex digits (write '%25'"
                    + " for a '%')", null);
        }
    }

    /** Never the Sentinels' password. */
    @Override
    public String toString() {
        return "RedisUrl[" + lettuceUrl.replaceAll("//[^@/?#]*@", "//***@") + ", replicas=" + replicas
                + ", replicaTimeout=" + replicaTimeout + ", hasTimeout=" + hasTimeout + ", sentinelPassword="
                + (sentinelPassword == null ? "none" : "***") + "]";
    }
}
