package dev.baton.cli;

import dev.baton.internal.Secrets;
import org.apache.zookeeper.common.PathUtils;

import java.util.Optional;

/**
 * What the CLI checks in a URL before any connection, so that a mistake is a usage error (64) naming the part
 * that is wrong, not a connection error (69) or a success on another server than the one written:
 * <ol>
 *   <li>schemes the CLI cannot serve yet (Redis Sentinel over TLS, unix sockets) are named;</li>
 *   <li>every host has a name and every port is a number from 1 to 65535;</li>
 *   <li>Redis: the database is a number; a {@code /} or {@code @} in the password is percent-encoded (else it
 *       would end the host part);</li>
 *   <li>ZooKeeper: no query string or fragment (its connect string has none: they would become part of the
 *       chroot), no credentials (not supported), a chroot that is a valid ZooKeeper path;</li>
 *   <li>PostgreSQL and MariaDB/MySQL: no {@code user:password@} (neither driver reads it: they take
 *       {@code ?user=…&password=…}).</li>
 * </ol>
 * Messages name the URL with its secrets hidden and never repeat a secret.
 */
final class UrlChecks {
    private UrlChecks() {
    }

    /**
     * Refuses a scheme the CLI does not serve, with the reason, or returns normally.
     *
     * @throws BatonFailure (64)
     */
    static void refuseUnsupportedScheme(String lower, String shown, String source) {
        if (lower.startsWith("rediss-sentinel://")) {
            throw bad(shown, source, "Redis Sentinel over TLS is not supported: use redis-sentinel://HOST:PORT,…#MASTER");
        }
        if (lower.startsWith("redis-socket://") || lower.startsWith("redis+socket://")) {
            throw bad(shown, source, "Redis over a unix socket is not supported: use redis://HOST:PORT");
        }
        if (lower.startsWith("redis+ssl://") || lower.startsWith("redis+tls://")) {
            throw bad(shown, source, "write rediss://HOST:PORT for Redis over TLS");
        }
    }

    /**
     * Checks a {@code redis://} or {@code rediss://} URL: {@code [[user:]password@]host[:port][/database][?…]}.
     *
     * @throws BatonFailure (64) naming what is wrong
     */
    static void redis(String url, String shown, String source) {
        String rest = url.substring(url.indexOf("://") + 3);
        int query = indexOfAny(rest, "?#");
        String beforeQuery = query >= 0 ? rest.substring(0, query) : rest;
        int at = beforeQuery.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = beforeQuery.substring(0, at);
            if (userInfo.indexOf('@') >= 0) {
                throw bad(shown, source, "the password (before the last '@') contains '@': percent-encode it as %40");
            }
            if (userInfo.indexOf('/') >= 0) {
                throw bad(shown, source, "the password (before '@') contains '/', which would end the host part:"
                        + " percent-encode it as %2F");
            }
        }
        String afterUserInfo = beforeQuery.substring(at + 1);
        int slash = afterUserInfo.indexOf('/');
        String authority = slash >= 0 ? afterUserInfo.substring(0, slash) : afterUserInfo;
        String path = slash >= 0 ? afterUserInfo.substring(slash + 1) : "";
        if (authority.indexOf(',') >= 0) {
            throw bad(shown, source, "one Redis server only: '" + authority + "' names several");
        }
        hostAndPort(authority, shown, source);
        if (!path.isEmpty() && !path.chars().allMatch(Character::isDigit)) {
            throw bad(shown, source, "database '" + path + "' is not a number (redis://HOST:PORT/0)");
        }
    }

    /**
     * Checks a {@code redis-sentinel://} URL: {@code [password@]host[:port][,host[:port]…][/database][?…]#master}, the
     * Sentinels' addresses and the name of the primary they watch.
     *
     * @throws BatonFailure (64) naming what is wrong
     */
    static void redisSentinel(String url, String shown, String source) {
        String rest = url.substring(url.indexOf("://") + 3);
        int hash = rest.indexOf('#');
        if (hash < 0 || hash == rest.length() - 1) {
            throw bad(shown, source, "a Redis Sentinel URL names the primary its Sentinels watch after '#':"
                    + " redis-sentinel://HOST:PORT,HOST:PORT/0#MASTER");
        }
        String beforeFragment = rest.substring(0, hash);
        int query = beforeFragment.indexOf('?');
        String beforeQuery = query >= 0 ? beforeFragment.substring(0, query) : beforeFragment;
        String afterUserInfo = beforeQuery.substring(beforeQuery.lastIndexOf('@') + 1);
        int slash = afterUserInfo.indexOf('/');
        String hosts = slash >= 0 ? afterUserInfo.substring(0, slash) : afterUserInfo;
        String path = slash >= 0 ? afterUserInfo.substring(slash + 1) : "";
        for (String host : hosts.split(",", -1)) {
            hostAndPort(host, shown, source);
        }
        if (!path.isEmpty() && !path.chars().allMatch(Character::isDigit)) {
            throw bad(shown, source, "database '" + path + "' is not a number (redis-sentinel://HOST:PORT/0#MASTER)");
        }
    }

    /**
     * Checks a {@code zookeeper://} URL: {@code host[:port][,host[:port]…][/chroot]}.
     *
     * @throws BatonFailure (64) naming what is wrong
     */
    static void zooKeeper(String url, String shown, String source) {
        String rest = url.substring("zookeeper://".length());
        int query = rest.indexOf('?');
        if (query >= 0) {
            throw bad(shown, source, "a ZooKeeper URL takes no query string ('" + Secrets.hide(rest.substring(query))
                    + "'): ZooKeeper's connect string has no parameters, and it would be read as part of the chroot");
        }
        int fragment = rest.indexOf('#');
        if (fragment >= 0) {
            throw bad(shown, source, "a ZooKeeper URL takes no fragment ('" + Secrets.hide(rest.substring(fragment))
                    + "')");
        }
        int slash = rest.indexOf('/');
        String hosts = slash >= 0 ? rest.substring(0, slash) : rest;
        BatonFailure credentials = bad(shown, source, "ZooKeeper digest credentials (user:password@) are not"
                + " supported: Baton's ZooKeeper client does not authenticate, so the chroot and the znodes under it"
                + " must let an unauthenticated client create, read and delete; leave the credentials out");
        if (hosts.indexOf('@') >= 0) {
            throw credentials;
        }
        try {
            for (String host : hosts.split(",", -1)) {
                hostAndPort(host, shown, source);
            }
        } catch (BatonFailure e) {
            // user:pa/ss@host: the '/' ended the hosts early; say what it is without repeating any of it
            throw rest.indexOf('@') >= 0 ? credentials : e;
        }
        zooKeeperChroot(rest).ifPresent(chroot -> {
            try {
                PathUtils.validatePath(chroot);
            } catch (IllegalArgumentException e) {
                throw bad(shown, source, "chroot '" + chroot + "' is not a ZooKeeper path: " + e.getMessage());
            }
        });
    }

    /** The chroot of a ZooKeeper connect string ({@code hosts/chroot}), if it has one other than {@code /}. */
    static Optional<String> zooKeeperChroot(String connectString) {
        int slash = connectString.indexOf('/');
        if (slash < 0 || connectString.length() == slash + 1) {
            return Optional.empty(); // "/" alone is no chroot, for ZooKeeper too
        }
        return Optional.of(connectString.substring(slash));
    }

    /**
     * Checks the hosts of a {@code jdbc:postgresql://…} or {@code jdbc:mariadb:[mode:]//…} URL: ports, and no
     * user-info. Other forms ({@code jdbc:postgresql:db}, MariaDB's {@code address=(…)}) are left to the driver.
     *
     * @throws BatonFailure (64) naming what is wrong
     */
    static void jdbc(String url, String shown, String source) {
        int start = url.indexOf("//");
        if (start < 0) {
            return;
        }
        String rest = url.substring(start + 2);
        int end = indexOfAny(rest, "/?;#");
        String authority = end >= 0 ? rest.substring(0, end) : rest;
        int q = indexOfAny(rest, "?;#");
        // '@' before the parameters: user-info (also when its password holds a '/')
        int at = (q >= 0 ? rest.substring(0, q) : rest).indexOf('@');
        if (at >= 0) {
            throw bad(shown, source, "the JDBC drivers take the user and the password as the URL's parameters"
                    + " user and password, not as user:password@ before the host");
        }
        if (authority.isEmpty() || authority.indexOf('(') >= 0) {
            return;
        }
        for (String host : authority.split(",", -1)) {
            if (!host.isEmpty()) {
                hostAndPort(host, shown, source);
            }
        }
    }

    /** Checks {@code host[:port]} or {@code [v6]:port}: a host, and a port from 1 to 65535 if one is written. */
    private static void hostAndPort(String hostPort, String shown, String source) {
        String host;
        String port = null;
        if (hostPort.startsWith("[")) {
            int close = hostPort.indexOf(']');
            if (close < 0) {
                throw bad(shown, source, "'" + hostPort + "' opens an IPv6 address with '[' and does not close it");
            }
            host = hostPort.substring(1, close);
            String after = hostPort.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw bad(shown, source, "'" + hostPort + "': expected ':PORT' after the IPv6 address");
                }
                port = after.substring(1);
            }
        } else {
            int colon = hostPort.lastIndexOf(':');
            host = colon >= 0 ? hostPort.substring(0, colon) : hostPort;
            port = colon >= 0 ? hostPort.substring(colon + 1) : null;
        }
        if (host.isEmpty()) {
            throw bad(shown, source, "no host in '" + hostPort + "'");
        }
        if (port != null) {
            int number;
            try {
                number = port.chars().allMatch(Character::isDigit) && !port.isEmpty() && port.length() <= 9
                        ? Integer.parseInt(port) : -1;
            } catch (NumberFormatException e) {
                number = -1;
            }
            if (number < 0) {
                throw bad(shown, source, "port '" + port + "' of " + host + " is not a number from 1 to 65535");
            }
            if (number < 1 || number > 65535) {
                throw bad(shown, source, "port " + number + " of " + host + " is out of range (1 to 65535)");
            }
        }
    }

    private static int indexOfAny(String s, String chars) {
        for (int i = 0; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    private static BatonFailure bad(String shown, String source, String what) {
        return new BatonFailure(ExitCodes.USAGE, "bad database URL '" + shown + "' (from " + source + "): " + what,
                null);
    }
}
