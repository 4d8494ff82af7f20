package dev.baton.cli;

import dev.baton.ForcedRelease;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.LockException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import dev.baton.redis.RedisLockClient;
import dev.baton.redis.RedisLocks;
import dev.baton.zookeeper.ZooKeeperLockClient;
import dev.baton.zookeeper.ZooKeeperLocks;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.sqlite.SQLiteDataSource;
import picocli.CommandLine.Option;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * The options every database subcommand shares: where the locks live, and how much to say. Remembers the
 * URL it resolved, so that an error anywhere in the command can name the database ({@link #resolved()}).
 */
final class DatabaseOptions {
    @Option(names = "--url", paramLabel = "URL",
            description = {"Lock database: jdbc:postgresql:…, jdbc:mariadb:…, jdbc:mysql:… (MariaDB driver), "
                    + "jdbc:sqlite:FILE (~/ is your home directory), or Redis:"
                    + " redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (rediss:// for TLS; %%2F for a / in the password;"
                    + " redis-sentinel://[PASSWORD@]HOST:PORT[,HOST:PORT…][/DB][?sentinelPassword=SENTINEL_PASSWORD]#MASTER"
                    + " for a primary found through Sentinel; sentinelPassword for Sentinels that ask for one),"
                    + " or ZooKeeper:"
                    + " zookeeper://HOST:PORT[,HOST:PORT…][/CHROOT] (the chroot must exist; no credentials)."
                    + " Checked before connecting; passwords are never printed.",
                    "Default: $" + DatabaseUrl.ENV + ", else the embedded SQLite file ~/.baton/baton.db."})
    String url;

    @Option(names = "--table", paramLabel = "NAME",
            description = "Lease table (default " + JdbcLocks.DEFAULT_TABLE + "). 'baton run' creates it if"
                    + " missing; no other command does. Not on Redis (its locks live under the key prefix "
                    + RedisLocks.DEFAULT_KEY_PREFIX + ") or ZooKeeper (under " + ZooKeeperLocks.DEFAULT_ROOT_PATH + ").")
    String table;

    @Option(names = {"-v", "--verbose"}, description = "Log progress and show stack traces of errors.")
    boolean verbose;

    @Option(names = "--allow-unflushed-commits", description = "PostgreSQL, MariaDB/MySQL: serve a server that"
            + " acknowledges commits before they are on disk (PostgreSQL fsync off; MariaDB/MySQL"
            + " innodb_flush_log_at_trx_commit other than 1, or a binary log with sync_binlog other than 1), which is"
            + " refused otherwise: a crash can then lose a grant and let a second holder in.")
    boolean allowUnflushedCommits;

    @Option(names = "--allow-eviction", description = "Redis: serve a server whose maxmemory-policy may evict lock"
            + " keys, which is refused otherwise: an evicted key lets a second holder in.")
    boolean allowEviction;

    private DatabaseUrl resolved;

    /** Resolves the URL from the option, the environment or the default. */
    DatabaseUrl resolveUrl() {
        resolved = DatabaseUrl.resolve(url, System.getenv(), home());
        return resolved;
    }

    /** The URL resolved by {@link #resolveUrl()}, if it was. */
    Optional<DatabaseUrl> resolved() {
        return Optional.ofNullable(resolved);
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

    /**
     * As {@link #connect(DatabaseUrl, Duration)}, with the given strategy.
     *
     * @throws BatonFailure (64) for the session strategy on SQLite, or an --allow-… option the URL's server has no
     *                     use for
     */
    OpenClient connect(DatabaseUrl databaseUrl, Duration leaseTime, Strategy strategy) {
        if (allowEviction && databaseUrl.kind() != DatabaseUrl.Kind.REDIS) {
            throw new BatonFailure(ExitCodes.USAGE, "--allow-eviction is for a Redis URL, not "
                    + databaseUrl.shown(), null);
        }
        if (allowUnflushedCommits && databaseUrl.kind() != DatabaseUrl.Kind.POSTGRESQL
                && databaseUrl.kind() != DatabaseUrl.Kind.MARIADB) {
            throw new BatonFailure(ExitCodes.USAGE, "--allow-unflushed-commits is for a PostgreSQL or MariaDB/MySQL"
                    + " URL, not " + databaseUrl.shown(), null);
        }
        if (databaseUrl.kind() == DatabaseUrl.Kind.REDIS) {
            if (strategy == Strategy.SESSION) {
                throw new BatonFailure(ExitCodes.USAGE, "--strategy session needs PostgreSQL or MariaDB/MySQL;"
                        + " Redis (" + databaseUrl.shown() + ") holds leases: use --strategy lease (the default)", null);
            }
            return redis(databaseUrl, leaseTime);
        }
        if (databaseUrl.kind() == DatabaseUrl.Kind.ZOOKEEPER) {
            if (strategy == Strategy.SESSION) {
                throw new BatonFailure(ExitCodes.USAGE, "--strategy session names the SQL session locks; a ZooKeeper"
                        + " lock (" + databaseUrl.shown() + ") is held by its ZooKeeper session already: leave"
                        + " --strategy out", null);
            }
            return zookeeper(databaseUrl, leaseTime);
        }
        if (strategy == Strategy.SESSION && databaseUrl.kind() == DatabaseUrl.Kind.SQLITE) {
            throw new BatonFailure(ExitCodes.USAGE, "--strategy session needs PostgreSQL or MariaDB/MySQL;"
                    + " SQLite (" + databaseUrl.describe() + ") has no session locks: use --strategy lease", null);
        }
        Database database = Database.open(databaseUrl, home(), Database.Access.CREATE);
        try {
            JdbcLocks.Builder builder = JdbcLocks.builder(database.dataSource()).createTableIfMissing()
                    .strategy(strategy);
            if (allowUnflushedCommits) {
                builder.allowUnflushedCommits();
            }
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

    /** The table these options name. */
    String tableName() {
        return table != null ? table : JdbcLocks.DEFAULT_TABLE;
    }

    /**
     * Opens the database and builds a lease client on its existing lock table, never creating anything: the
     * operator's commands ({@code list}, {@code status}, {@code release}, {@code purge}).
     *
     * @throws BatonFailure (64) for a table name that is not allowed, (66) if the table (or the SQLite file)
     *                      is missing or incomplete, (69/77) if the database is unreachable or refused
     */
    OpenClient connectExisting(DatabaseUrl databaseUrl, Database.Access access) {
        if (databaseUrl.kind() == DatabaseUrl.Kind.REDIS) {
            return redis(databaseUrl, null);
        }
        if (databaseUrl.kind() == DatabaseUrl.Kind.ZOOKEEPER) {
            return zookeeper(databaseUrl, null);
        }
        // a bad --table is a usage error, said before anything is opened: this builder is never built, it
        // only checks the name
        builder(new SQLiteDataSource());
        Database database = Database.open(databaseUrl, home(), access);
        try {
            JdbcLocks.Builder builder = builder(database.dataSource());
            if (!exists(database, tableName(), databaseUrl)) {
                throw new BatonFailure(ExitCodes.NO_TABLE, "no lock table '" + tableName() + "' in "
                        + databaseUrl.describe() + (table != null ? " (is --table right?)" : "")
                        + "; 'baton run' creates it", null);
            }
            return new OpenClient(build(builder, databaseUrl), database);
        } catch (RuntimeException e) {
            database.close();
            throw e;
        }
    }

    /**
     * A session-strategy client on the existing tables, to see session locks; empty on SQLite, or when the
     * session strategy's name table {@code <table>_names} does not exist (then no session lock was ever
     * taken with this table).
     */
    Optional<OpenClient> connectSessionIfPresent(DatabaseUrl databaseUrl) {
        if (databaseUrl.kind() == DatabaseUrl.Kind.SQLITE || !databaseUrl.isSql()) {
            return Optional.empty();
        }
        Database database = Database.open(databaseUrl, home(), Database.Access.READ);
        try {
            JdbcLocks.Builder builder = builder(database.dataSource()).strategy(Strategy.SESSION);
            if (!exists(database, tableName() + "_names", databaseUrl)) {
                database.close();
                return Optional.empty();
            }
            return Optional.of(new OpenClient(build(builder, databaseUrl), database));
        } catch (RuntimeException e) {
            database.close();
            throw e;
        }
    }

    /**
     * A Redis lock client (baton-redis) with its own connections, closed with it. Nothing is created on Redis until
     * a lock is taken.
     *
     * @throws BatonFailure (64) for {@code --table} or a URL Lettuce cannot parse
     */
    private OpenClient redis(DatabaseUrl databaseUrl, Duration leaseTime) {
        if (table != null) {
            throw new BatonFailure(ExitCodes.USAGE, "--table names a SQL lock table; Redis (" + databaseUrl.shown()
                    + ") has no tables: its locks live under the key prefix " + RedisLocks.DEFAULT_KEY_PREFIX, null);
        }
        RedisLocks.Builder builder;
        try {
            // Lettuce's URL (redis-sentinel:// too) plus Baton's requireReplicas / replicaTimeout parameters;
            // connecting is bounded by the command timeout unless the URL sets Lettuce's timeout
            builder = RedisLocks.builder(databaseUrl.jdbcUrl()).commandTimeout(Database.SOCKET_TIMEOUT);
        } catch (IllegalArgumentException e) {
            throw new BatonFailure(ExitCodes.USAGE, "invalid Redis URL '" + databaseUrl.shown() + "': "
                    + databaseUrl.scrub(BatonCommand.oneLine(e.getMessage())), e);
        }
        if (leaseTime != null) {
            builder.leaseTime(leaseTime);
        }
        if (allowEviction) {
            builder.allowEviction();
        }
        return new OpenClient(builder.build(), () -> { });
    }

    /**
     * A ZooKeeper lock client (baton-zookeeper) with a Curator client of its own, closed with it; its session timeout
     * is the lease time ({@code baton run --lease}), or ZooKeeperLocks' default. A chroot in the URL must exist.
     *
     * @throws BatonFailure (64) for {@code --table}, (77) for a chroot that does not exist or refuses this client
     */
    private OpenClient zookeeper(DatabaseUrl databaseUrl, Duration leaseTime) {
        if (table != null) {
            throw new BatonFailure(ExitCodes.USAGE, "--table names a SQL lock table; ZooKeeper (" + databaseUrl.shown()
                    + ") has no tables: its locks live under the znode " + ZooKeeperLocks.DEFAULT_ROOT_PATH, null);
        }
        UrlChecks.zooKeeperChroot(databaseUrl.jdbcUrl()).ifPresent(chroot -> requireChroot(databaseUrl, chroot));
        ZooKeeperLocks.Builder builder;
        try {
            builder = ZooKeeperLocks.builder(databaseUrl.jdbcUrl()).connectionTimeout(Database.CONNECT_TIMEOUT);
        } catch (IllegalArgumentException e) {
            throw new BatonFailure(ExitCodes.USAGE, "invalid ZooKeeper URL '" + databaseUrl.shown() + "': "
                    + e.getMessage(), e);
        }
        if (leaseTime != null) {
            builder.leaseTime(leaseTime).sessionTimeout(leaseTime);
        }
        return new OpenClient(builder.build(), () -> { });
    }

    /**
     * Checks that the chroot of a ZooKeeper URL exists and that this (unauthenticated) client may list it, on a
     * connection without the chroot: ZooKeeper cannot create a client's own chroot through it, and Baton does not
     * create it elsewhere.
     *
     * @throws BatonFailure (77) if the chroot does not exist or its ACL refuses this client, (69) if no server of
     *                      the URL answers within {@link Database#CONNECT_TIMEOUT}
     */
    private static void requireChroot(DatabaseUrl databaseUrl, String chroot) {
        String connect = databaseUrl.jdbcUrl();
        String hosts = connect.substring(0, connect.length() - chroot.length());
        int connectMs = (int) Database.CONNECT_TIMEOUT.toMillis();
        try (CuratorFramework zk = CuratorFrameworkFactory.builder().connectString(hosts)
                .connectionTimeoutMs(connectMs).sessionTimeoutMs(Math.max(connectMs, 4000))
                .retryPolicy(new RetryOneTime(100)).build()) {
            zk.start();
            if (!zk.blockUntilConnected(connectMs, TimeUnit.MILLISECONDS)) {
                throw new BatonFailure(ExitCodes.UNAVAILABLE, "cannot reach " + databaseUrl.shown() + " (unreachable):"
                        + " no ZooKeeper server of " + hosts + " answered within " + connectMs + " ms", null);
            }
            zk.getChildren().forPath(chroot);
        } catch (KeeperException.NoNodeException e) {
            throw new BatonFailure(ExitCodes.REFUSED, "the chroot " + chroot + " does not exist on ZooKeeper " + hosts
                    + " (" + databaseUrl.shown() + "): Baton does not create it; create it (zkCli.sh create " + chroot
                    + ") or leave it out of the URL", e);
        } catch (KeeperException.NoAuthException e) {
            throw new BatonFailure(ExitCodes.REFUSED, databaseUrl.shown() + " refused access (permission): the ACL of"
                    + " the chroot " + chroot + " does not let an unauthenticated client read it, and Baton's"
                    + " ZooKeeper client does not authenticate", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BatonFailure(130, "interrupted while checking the chroot " + chroot + " on " + hosts, e);
        } catch (BatonFailure e) {
            throw e;
        } catch (Exception e) {
            throw DatabaseErrors.failure(databaseUrl, e);
        }
    }

    private JdbcLocks.Builder builder(DataSource dataSource) {
        JdbcLocks.Builder builder = JdbcLocks.builder(dataSource);
        if (table != null) {
            try {
                builder.tableName(table);
            } catch (IllegalArgumentException e) {
                // the library names its setter; say the option
                throw new BatonFailure(ExitCodes.USAGE, String.valueOf(e.getMessage())
                        .replaceFirst("^tableName", "--table"), e);
            }
        }
        return builder;
    }

    private static JdbcLockClient build(JdbcLocks.Builder builder, DatabaseUrl databaseUrl) {
        try {
            return builder.build();
        } catch (dev.baton.LockBackendException e) {
            throw e;
        } catch (LockException e) {
            // a table without its sequence, counter or companion tables
            throw new BatonFailure(ExitCodes.NO_TABLE, "incomplete lock tables in " + databaseUrl.describe() + ": "
                    + BatonCommand.cliWords(databaseUrl.scrub(BatonCommand.oneLine(e.getMessage()))), e);
        }
    }

    /** Whether the (validated) table can be read; a missing table is false, any other failure is thrown. */
    private static boolean exists(Database database, String table, DatabaseUrl databaseUrl) {
        try (Connection c = database.dataSource().getConnection(); Statement st = c.createStatement()) {
            try {
                st.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
                return true;
            } catch (SQLException e) {
                if (DatabaseErrors.isMissingTable(e)) {
                    return false;
                }
                throw e;
            } finally {
                if (!c.getAutoCommit()) {
                    c.rollback();
                }
            }
        } catch (SQLException e) {
            throw DatabaseErrors.failure(databaseUrl, e);
        }
    }

    /** {@code ~}: {@code $HOME} as the shell sees it, else the JVM's {@code user.home}. */
    static Path home() {
        String home = System.getenv("HOME");
        return Path.of(home != null && !home.isBlank() ? home : System.getProperty("user.home"));
    }

    /**
     * A lock client and what it runs on (a SQL database's pool), closed together (client first).
     *
     * @param client   the lock client: a {@link JdbcLockClient}, a {@link RedisLockClient} or a {@link ZooKeeperLockClient}
     * @param database its connections, if they are not the client's own
     */
    record OpenClient(LockClient client, AutoCloseable database) implements AutoCloseable {

        /** The operator's force release, on either kind of client. */
        Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
            if (client instanceof JdbcLockClient jdbc) {
                return jdbc.forceRelease(name, token);
            }
            if (client instanceof ZooKeeperLockClient zk) {
                return zk.forceRelease(name, token);
            }
            return ((RedisLockClient) client).forceRelease(name, token);
        }

        /**
         * The operator's removal of a place in line, on a JDBC or Redis client.
         *
         * @throws BatonFailure (64) on ZooKeeper, whose waiters' places are member nodes that end with their sessions
         */
        Optional<LockInfo.Waiter> removeFromLine(String name, String owner, DatabaseUrl url) {
            if (client instanceof JdbcLockClient jdbc) {
                return jdbc.removeFromLine(name, owner);
            }
            if (client instanceof RedisLockClient redis) {
                return redis.removeFromLine(name, owner);
            }
            throw new BatonFailure(ExitCodes.USAGE, "--waiter is not supported on " + url.shown() + ": a ZooKeeper"
                    + " waiter's place is its member node, which ends with its session (a dead waiter's when its"
                    + " session expires)", null);
        }

        /**
         * Deletes lease rows that ended more than {@code olderThan} ago.
         *
         * @throws BatonFailure (64) on Redis, whose grants expire by themselves
         */
        int purgeExpired(Duration olderThan, DatabaseUrl url) {
            if (client instanceof JdbcLockClient jdbc) {
                return jdbc.purgeExpired(olderThan);
            }
            throw new BatonFailure(ExitCodes.USAGE, "nothing to purge on " + url.shown() + ": "
                    + (url.kind() == DatabaseUrl.Kind.ZOOKEEPER ? "a member node ends with its holder's session"
                    : "a grant's key expires with its lease"), null);
        }

        @Override
        public void close() {
            try {
                client.close();
            } catch (RuntimeException e) {
                // closing does not fail in a way the user can act on; the process is ending anyway
            } finally {
                try {
                    database.close();
                } catch (Exception e) {
                    // as above
                }
            }
        }
    }
}
