package dev.baton.cli;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * A database URL the CLI can open: which kind of database, the JDBC URL handed to the driver, and the URL
 * as the user wrote it (with any password hidden) for messages.
 *
 * @param kind    the database kind
 * @param jdbcUrl the URL given to the driver ({@code jdbc:mysql:} is rewritten to {@code jdbc:mariadb:})
 * @param shown   the URL as written, password hidden, for messages
 */
record DatabaseUrl(Kind kind, String jdbcUrl, String shown) {
    /** The environment variable read when {@code --url} is not given. */
    static final String ENV = "BATON_URL";
    /** The prefixes accepted, for messages and help. */
    static final String SUPPORTED = "jdbc:postgresql:, jdbc:mariadb:, jdbc:mysql: or jdbc:sqlite:";

    /** The kinds of database, each with its JDBC driver. */
    enum Kind {
        POSTGRESQL("org.postgresql.Driver"),
        MARIADB("org.mariadb.jdbc.Driver"),
        SQLITE("org.sqlite.JDBC");

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
     * @throws BatonFailure (64) for an empty or unsupported URL
     */
    static DatabaseUrl resolve(String option, Map<String, String> env, Path home) {
        if (option != null) {
            return parse(option, "--url");
        }
        String fromEnv = env.get(ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            return parse(fromEnv, ENV);
        }
        return new DatabaseUrl(Kind.SQLITE, "jdbc:sqlite:" + defaultSqliteFile(home), "jdbc:sqlite:"
                + defaultSqliteFile(home));
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
     * Parses a URL.
     *
     * @param source where it came from ({@code --url} or {@value #ENV}), for the message
     * @throws BatonFailure (64) naming the supported prefixes
     */
    static DatabaseUrl parse(String url, String source) {
        String lower = url.toLowerCase(Locale.ROOT);
        String shown = hidePassword(url);
        if (lower.startsWith("jdbc:postgresql:")) {
            return new DatabaseUrl(Kind.POSTGRESQL, url, shown);
        }
        if (lower.startsWith("jdbc:mariadb:")) {
            return new DatabaseUrl(Kind.MARIADB, url, shown);
        }
        if (lower.startsWith("jdbc:mysql:")) {
            // The MariaDB driver speaks to MySQL too, but only accepts its own scheme by default.
            return new DatabaseUrl(Kind.MARIADB, "jdbc:mariadb:" + url.substring("jdbc:mysql:".length()), shown);
        }
        if (lower.startsWith("jdbc:sqlite:") && url.length() > "jdbc:sqlite:".length()) {
            return new DatabaseUrl(Kind.SQLITE, url, shown);
        }
        throw new BatonFailure(ExitCodes.USAGE, "unsupported database URL '" + shown + "' (from " + source
                + "): use " + SUPPORTED, null);
    }

    /** The URL with the value of any password parameter or user-info password replaced by {@code ***}. */
    static String hidePassword(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***")
                .replaceAll("(//[^/@:]*:)[^/@]*@", "$1***@");
    }
}
