package dev.baton.cli;

import dev.baton.internal.Secrets;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A lock server URL the CLI can open: which kind of server, the URL handed to its driver, and the URL as the user
 * wrote it (with any password hidden) for messages.
 *
 * @param kind    the server kind
 * @param jdbcUrl the URL given to the driver: the JDBC URL ({@code jdbc:mysql:} is rewritten to
 *                {@code jdbc:mariadb:}), the {@code redis://} / {@code rediss://} / {@code redis-sentinel://} URL
 *                given to {@code RedisLocks.builder(String)}, or the
 *                ZooKeeper connect string ({@code host:port[,host:port…][/chroot]}) of a {@code zookeeper://} URL
 * @param shown   the URL as written, password hidden, for messages
 * @param rawUrl  the URL as written, to find its passwords in other text ({@link #scrub}); never printed
 */
record DatabaseUrl(Kind kind, String jdbcUrl, String shown, String rawUrl) {
    /** The environment variable read when {@code --url} is not given. */
    static final String ENV = "BATON_URL";
    /** The prefixes accepted, for messages and help. */
    static final String SUPPORTED = "jdbc:postgresql:, jdbc:mariadb:, jdbc:mysql:, jdbc:sqlite:, redis://, rediss://,"
            + " redis-sentinel:// or zookeeper://";
    private static final String SQLITE_PREFIX = "jdbc:sqlite:";

    @Override
    public String toString() {
        return "DatabaseUrl[" + kind + ", " + shown + "]";
    }

    /** The kinds of lock server, each SQL database with its JDBC driver. */
    enum Kind {
        POSTGRESQL("org.postgresql.Driver"),
        MARIADB("org.mariadb.jdbc.Driver"),
        SQLITE("org.sqlite.JDBC"),
        /** Redis through Lettuce (baton-redis): no JDBC driver, no table. */
        REDIS(null),
        /** ZooKeeper through Curator (baton-zookeeper): the URL's rest is the connect string. */
        ZOOKEEPER(null);

        private final String driver;

        Kind(String driver) {
            this.driver = driver;
        }

        String driver() {
            return driver;
        }
    }

    /**
     * Picks the URL: the option if given, else {@value #ENV}, else the embedded SQLite file
     * {@code ~/.baton/baton.db}.
     *
     * @throws BatonFailure (64) for an empty, unsupported or malformed URL ({@link UrlChecks})
     */
    static DatabaseUrl resolve(String option, Map<String, String> env, Path home) {
        if (option != null) {
            return parse(option, "--url", home);
        }
        String fromEnv = env.get(ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            return parse(fromEnv, ENV, home);
        }
        String file = "jdbc:sqlite:" + defaultSqliteFile(home);
        return new DatabaseUrl(Kind.SQLITE, file, file, file);
    }

    /** The embedded database used when no URL is given. */
    static Path defaultSqliteFile(Path home) {
        return home.resolve(".baton").resolve("baton.db");
    }

    /** Whether this is the embedded default file, whose directory the CLI creates. */
    boolean isDefaultSqlite(Path home) {
        return jdbcUrl.equals("jdbc:sqlite:" + defaultSqliteFile(home));
    }

    /**
     * Parses a URL; a SQLite file starting {@code ~/} is in {@code home} (the shell does not expand {@code ~}
     * inside a URL, and the driver does not either).
     *
     * @param source where it came from ({@code --url} or {@value #ENV}), for the message
     * @throws BatonFailure (64) naming the supported prefixes, or what is wrong with the URL ({@link UrlChecks})
     */
    static DatabaseUrl parse(String url, String source, Path home) {
        return parse(expandHome(url, home), source);
    }

    /** {@code jdbc:sqlite:~/x} (or {@code jdbc:sqlite:file:~/x}) with {@code ~} replaced by {@code home}. */
    static String expandHome(String url, Path home) {
        for (String prefix : List.of(SQLITE_PREFIX, SQLITE_PREFIX + "file:")) {
            if (url.regionMatches(true, 0, prefix, 0, prefix.length())
                    && url.startsWith("~/", prefix.length())) {
                return url.substring(0, prefix.length()) + home.resolve(url.substring(prefix.length() + 2));
            }
        }
        return url;
    }

    /** The SQLite file this URL names, or empty for another database or an in-memory one. */
    Optional<Path> sqliteFile() {
        if (kind != Kind.SQLITE) {
            return Optional.empty();
        }
        String rest = jdbcUrl.substring(SQLITE_PREFIX.length());
        if (rest.startsWith("file:")) {
            rest = rest.substring("file:".length());
        }
        int query = rest.indexOf('?');
        if (query >= 0) {
            rest = rest.substring(0, query);
        }
        if (rest.isEmpty() || rest.equals(":memory:") || rest.startsWith(":resource:")) {
            return Optional.empty();
        }
        return Optional.of(Path.of(rest).toAbsolutePath());
    }

    /** Whether this is a SQL database (a JDBC URL), with tables and the session strategy. */
    boolean isSql() {
        return kind.driver() != null;
    }

    /** How messages name this database: the SQLite file, or the URL with any password hidden. */
    String describe() {
        return sqliteFile().map(f -> "SQLite file " + f).orElse(shown);
    }

    /**
     * Parses a URL as written (no {@code ~} expansion).
     *
     * @param source where it came from ({@code --url} or {@value #ENV}), for the message
     * @throws BatonFailure (64) naming the supported prefixes, or what is wrong with the URL ({@link UrlChecks})
     */
    static DatabaseUrl parse(String url, String source) {
        String lower = url.toLowerCase(Locale.ROOT);
        String shown = Secrets.hide(url);
        UrlChecks.refuseUnsupportedScheme(lower, shown, source);
        if (lower.startsWith("jdbc:postgresql:")) {
            UrlChecks.jdbc(url, shown, source);
            return new DatabaseUrl(Kind.POSTGRESQL, url, shown, url);
        }
        if (lower.startsWith("jdbc:mariadb:")) {
            UrlChecks.jdbc(url, shown, source);
            return new DatabaseUrl(Kind.MARIADB, url, shown, url);
        }
        if (lower.startsWith("jdbc:mysql:")) {
            UrlChecks.jdbc(url, shown, source);
            // The MariaDB driver speaks to MySQL too, but only accepts its own scheme by default.
            return new DatabaseUrl(Kind.MARIADB, "jdbc:mariadb:" + url.substring("jdbc:mysql:".length()), shown, url);
        }
        if (lower.startsWith("jdbc:sqlite:") && url.length() > "jdbc:sqlite:".length()) {
            return new DatabaseUrl(Kind.SQLITE, url, shown, url);
        }
        if ((lower.startsWith("redis://") && url.length() > "redis://".length())
                || (lower.startsWith("rediss://") && url.length() > "rediss://".length())) {
            UrlChecks.redis(url, shown, source);
            return new DatabaseUrl(Kind.REDIS, url, shown, url);
        }
        if (lower.startsWith("redis-sentinel://") && url.length() > "redis-sentinel://".length()) {
            UrlChecks.redisSentinel(url, shown, source);
            return new DatabaseUrl(Kind.REDIS, url, shown, url);
        }
        if (lower.startsWith("zookeeper://") && url.length() > "zookeeper://".length()) {
            UrlChecks.zooKeeper(url, shown, source);
            return new DatabaseUrl(Kind.ZOOKEEPER, url.substring("zookeeper://".length()), shown, url);
        }
        throw new BatonFailure(ExitCodes.USAGE, "unsupported database URL '" + shown + "' (from " + source
                + "): use " + SUPPORTED, null);
    }

    /**
     * {@code text} with every secret of this URL removed (as written and percent-decoded), and those of any other
     * URL written in it ({@link Secrets#hide(String, java.util.Collection)}).
     */
    String scrub(String text) {
        return Secrets.hide(text, List.of(rawUrl));
    }
}
