package dev.baton.cli;

import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;

/** The options every subcommand shares: where the locks live, and how much to say. */
final class DatabaseOptions {
    @Option(names = "--url", paramLabel = "URL",
            description = {"Lock database: jdbc:postgresql:…, jdbc:mariadb:…, jdbc:mysql:… (MariaDB driver) or "
                    + "jdbc:sqlite:FILE.",
                    "Default: $" + DatabaseUrl.ENV + ", else the embedded SQLite file ~/.baton/baton.db."})
    String url;

    @Option(names = "--table", paramLabel = "NAME",
            description = "Lease table (default " + JdbcLocks.DEFAULT_TABLE + "); created if missing.")
    String table;

    @Option(names = {"-v", "--verbose"}, description = "Log progress and show stack traces of errors.")
    boolean verbose;

    /** Resolves the URL from the option, the environment or the default. */
    DatabaseUrl resolveUrl() {
        return DatabaseUrl.resolve(url, System.getenv(), home());
    }

    /**
     * Opens the database and builds a lock client on it, creating the table if missing. The client closes
     * the database when closed.
     *
     * @param leaseTime the lease time, or null for the library's default
     */
    OpenClient connect(DatabaseUrl databaseUrl, Duration leaseTime) {
        return connect(databaseUrl, leaseTime, Strategy.LEASE);
    }

    /** As {@link #connect(DatabaseUrl, Duration)}, with the given strategy. */
    OpenClient connect(DatabaseUrl databaseUrl, Duration leaseTime, Strategy strategy) {
        Database database = Database.open(databaseUrl, home());
        try {
            JdbcLocks.Builder builder = JdbcLocks.builder(database.dataSource()).createTableIfMissing()
                    .strategy(strategy);
            if (table != null) {
                builder.tableName(table);
            }
            if (leaseTime != null) {
                builder.leaseTime(leaseTime);
            }
            return new OpenClient(builder.build(), database);
        } catch (RuntimeException e) {
            database.close();
            throw e;
        }
    }

    /** {@code ~}: {@code $HOME} as the shell sees it, else the JVM's {@code user.home}. */
    private static Path home() {
        String home = System.getenv("HOME");
        return Path.of(home != null && !home.isBlank() ? home : System.getProperty("user.home"));
    }

    /**
     * A lock client and the database under it, closed together (client first).
     *
     * @param client   the lock client
     * @param database its connections
     */
    record OpenClient(JdbcLockClient client, Database database) implements AutoCloseable {
        @Override
        public void close() {
            try {
                client.close();
            } finally {
                database.close();
            }
        }
    }
}
