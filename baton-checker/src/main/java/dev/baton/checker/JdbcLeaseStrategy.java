package dev.baton.checker;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.lease.JdbcLeaseBackend;
import dev.baton.spi.AbstractClientBuilder;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

import javax.sql.DataSource;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JDBC lease-row strategy ({@link JdbcLocks}) on {@code jdbc:postgresql:}, {@code jdbc:mariadb:} (and
 * {@code jdbc:mysql:}, spoken by the MariaDB driver) and {@code jdbc:sqlite:} URLs.
 *
 * <p>Workers use a small HikariCP pool with socket and connect timeouts of twice the lease time (at least
 * 2 s), so a statement stuck behind a partition gives up, and a pool that does not fail at start so a
 * worker respawned during a fault keeps trying. PostgreSQL sessions carry {@code application_name
 * baton-check-<identity>} for people watching {@code pg_stat_activity}; the checker itself finds a worker's
 * sessions by their client port. SQLite is a file on this host: it has no sessions to kill and no network
 * path to cut, so {@code session-kill} and {@code partition} do not apply to it.
 *
 * <p>Subclasses may override {@link #newClient} to put a different {@link dev.baton.spi.LockBackend} over the
 * same table (the checker's positive controls do, in its tests).
 */
public class JdbcLeaseStrategy implements CheckStrategy {
    private static final Pattern NETWORK_URL = Pattern.compile("(?i)(jdbc:(?:postgresql|mariadb|mysql)://)"
            + "([^/:?,]+|\\[[^]]+])(?::(\\d+))?(.*)");

    /** Which database a URL names. */
    protected enum Kind {
        POSTGRESQL("postgresql", 5432), MARIADB("mariadb", 3306), SQLITE("sqlite", -1);

        final String id;
        final int defaultPort;

        Kind(String id, int defaultPort) {
            this.id = id;
            this.defaultPort = defaultPort;
        }
    }

    @Override
    public String name() {
        return "lease";
    }

    @Override
    public void validate(String url) {
        kind(url);
        if (kind(url) != Kind.SQLITE && !NETWORK_URL.matcher(url).matches()) {
            throw new IllegalArgumentException("--url: '" + url + "' has no //host[:port]/ part the checker can"
                    + " route through its fault proxy");
        }
    }

    /** @throws IllegalArgumentException for an unsupported URL */
    protected static Kind kind(String url) {
        String lower = url.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:postgresql:")) {
            return Kind.POSTGRESQL;
        }
        if (lower.startsWith("jdbc:mariadb:") || lower.startsWith("jdbc:mysql:")) {
            return Kind.MARIADB;
        }
        if (lower.startsWith("jdbc:sqlite:") && lower.length() > "jdbc:sqlite:".length()) {
            return Kind.SQLITE;
        }
        throw new IllegalArgumentException("--url: strategy 'lease' runs on jdbc:postgresql:, jdbc:mariadb:,"
                + " jdbc:mysql: or jdbc:sqlite: URLs, not '" + url + "'");
    }

    /** The URL handed to the driver: {@code jdbc:mysql:} becomes {@code jdbc:mariadb:}. */
    protected static String driverUrl(String url) {
        return url.toLowerCase(Locale.ROOT).startsWith("jdbc:mysql:")
                ? "jdbc:mariadb:" + url.substring("jdbc:mysql:".length()) : url;
    }

    /** The strategy's settings on a builder, for the controller's client and the workers' alike. */
    protected JdbcLocks.Builder configure(JdbcLocks.Builder builder) {
        return builder;
    }

    /** Whether the backend shows a lock's holder as a server session (named by its client port). */
    protected boolean holdersAreSessions() {
        return false;
    }

    /** Connections a worker's pool may open. */
    protected int workerPoolSize() {
        return 3;
    }

    @Override
    public CheckBackend open(String url, String table, Duration leaseTime) {
        Kind kind = kind(url);
        // the controller's client, its sampler and its session killer may each hold connections at once
        DataSourceHandle ds = dataSource(url, null, Duration.ofSeconds(10), "baton-check-controller", 6);
        try (Connection c = ds.dataSource().getConnection()) {
            LockClient probeClient = configure(JdbcLocks.builder(ds.dataSource()).tableName(table).leaseTime(leaseTime)
                    .clientIdPrefix("checker").createTableIfMissing()).build();
            try (Statement st = c.createStatement()) {
                // the checker's own table: start every scenario from no rows, so no earlier run's leases linger
                st.executeUpdate("DELETE FROM " + table);
            }
            return new Backend(kind, url, ds, probeClient, table, holdersAreSessions());
        } catch (SQLException e) {
            ds.close();
            throw new IllegalStateException("cannot prepare " + kind.id + " at " + url + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            ds.close();
            throw e;
        }
    }

    @Override
    public void validate(String url, Pool pool) {
        validate(url);
        if (pool == Pool.PGBOUNCER && kind(url) != Kind.POSTGRESQL) {
            throw new IllegalArgumentException("--pool pgbouncer: PgBouncer speaks PostgreSQL only, not '" + url + "'");
        }
        if ((pool == Pool.AUTOCOMMIT_OFF || pool == Pool.SMALL) && kind(url) == Kind.SQLITE) {
            throw new IllegalArgumentException("--pool " + pool + ": the checker runs SQLite on the driver's own data"
                    + " source, not a pool; use a PostgreSQL or MariaDB/MySQL URL");
        }
    }

    @Override
    public LockClient newClient(String url, String table, Duration leaseTime, String identity) {
        return newClient(url, table, leaseTime, identity, Pool.DEFAULT);
    }

    @Override
    public LockClient newClient(String url, String table, Duration leaseTime, String identity, Pool pool) {
        validate(url, pool);
        DataSourceHandle ds = dataSource(url, identity, max(leaseTime.multipliedBy(2), Duration.ofSeconds(2)),
                "baton-check-" + identity, pool == Pool.SMALL ? Pool.SMALL_SIZE : workerPoolSize(),
                pool == Pool.AUTOCOMMIT_OFF);
        try {
            // the pool lives as long as the worker process: its threads are daemons and its sockets close at exit
            return configure(JdbcLocks.builder(ds.dataSource()).tableName(table).leaseTime(leaseTime)
                    .clientIdPrefix(identity)).build();
        } catch (RuntimeException e) {
            ds.close();
            throw e;
        }
    }

    @Override
    public Duration handOverBound(Duration leaseTime) {
        return leaseTime.plus(AbstractClientBuilder.DEFAULT_MAX_POLL);
    }

    /**
     * A place in line lives {@link JdbcLeaseBackend#PLACE_TTL} after its last heartbeat, whatever the lease; the live
     * waiter behind it finds its turn by its own heartbeat ({@link JdbcLeaseBackend#HEARTBEAT}) or its next poll.
     */
    @Override
    public Optional<Duration> deadPlaceBound(Duration leaseTime) {
        return Optional.of(JdbcLeaseBackend.PLACE_TTL.plus(JdbcLeaseBackend.HEARTBEAT)
                .plus(AbstractClientBuilder.DEFAULT_MAX_POLL));
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /** A data source and how to close it. */
    public record DataSourceHandle(DataSource dataSource, AutoCloseable closer) implements AutoCloseable {
        @Override
        public void close() {
            try {
                closer.close();
            } catch (Exception ignored) {
                // closing a pool at the end of a run
            }
        }
    }

    /**
     * A data source for the URL: SQLite's own (WAL, 10 s busy timeout), else a small HikariCP pool with the
     * given socket/connect timeout.
     */
    public static DataSourceHandle dataSource(String url, String identity, Duration timeout, String appName) {
        return dataSource(url, identity, timeout, appName, 3);
    }

    /** As {@link #dataSource(String, String, Duration, String)}, with a pool of at most {@code poolSize}. */
    public static DataSourceHandle dataSource(String url, String identity, Duration timeout, String appName,
                                              int poolSize) {
        return dataSource(url, identity, timeout, appName, poolSize, false);
    }

    /** As above; with {@code autoCommitOff} the pool's connections default to {@code autoCommit=false}. */
    public static DataSourceHandle dataSource(String url, String identity, Duration timeout, String appName,
                                              int poolSize, boolean autoCommitOff) {
        Kind kind = kind(url);
        if (kind == Kind.SQLITE) {
            SQLiteConfig config = new SQLiteConfig();
            config.setJournalMode(SQLiteConfig.JournalMode.WAL);
            config.setBusyTimeout(10_000);
            SQLiteDataSource ds = new SQLiteDataSource(config);
            ds.setUrl(url);
            return new DataSourceHandle(ds, () -> { });
        }
        HikariConfig config = new HikariConfig();
        config.setPoolName(appName);
        config.setJdbcUrl(driverUrl(url));
        config.setMaximumPoolSize(poolSize);
        config.setAutoCommit(!autoCommitOff);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(Math.max(250, timeout.toMillis()));
        config.setValidationTimeout(Math.max(250, Math.min(1000, timeout.toMillis() / 2)));
        config.setInitializationFailTimeout(identity == null ? 1 : -1);
        if (kind == Kind.POSTGRESQL) {
            config.addDataSourceProperty("ApplicationName", appName);
            config.addDataSourceProperty("socketTimeout", Long.toString(Math.max(1, timeout.toSeconds())));
            config.addDataSourceProperty("connectTimeout", Long.toString(Math.max(1, timeout.toSeconds())));
            config.addDataSourceProperty("tcpKeepAlive", "true");
        } else {
            config.addDataSourceProperty("socketTimeout", Long.toString(timeout.toMillis()));
            config.addDataSourceProperty("connectTimeout", Long.toString(timeout.toMillis()));
            config.addDataSourceProperty("tcpKeepAlive", "true");
        }
        HikariDataSource pool = new HikariDataSource(config);
        return new DataSourceHandle(pool, pool);
    }

    /** The controller's view of a JDBC backend. */
    private static final class Backend implements CheckBackend {
        private final Kind kind;
        private final String url;
        private final DataSourceHandle ds;
        private final LockClient client;
        private final String table;
        private final boolean sessions;

        Backend(Kind kind, String url, DataSourceHandle ds, LockClient client, String table, boolean sessions) {
            this.kind = kind;
            this.url = url;
            this.ds = ds;
            this.client = client;
            this.table = table;
            this.sessions = sessions;
        }

        /**
         * Session locks: every held lock with the holding session's client port, listing and lookup in one
         * statement (so a session that ends meanwhile cannot be confused with another). The holder text is
         * what {@link LockClient#list()} shows: {@code application_name (pid N)} or {@code connection N}.
         */
        @Override
        public List<Seen> look() {
            if (!sessions) {
                return CheckBackend.super.look();
            }
            String sql = kind == Kind.POSTGRESQL
                    ? "SELECT n.name, coalesce(a.application_name, '') || ' (pid ' || l.pid || ')', a.client_port"
                      + " FROM pg_locks l JOIN " + table + "_names n"
                      + " ON n.lock_key = ((l.classid::bigint << 32) | l.objid::bigint)"
                      + " LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
                      + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                      + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                    : "SELECT u.name, CONCAT('connection ', u.id), p.HOST FROM (SELECT name, IS_USED_LOCK(lock_key) AS id"
                      + " FROM " + table + "_names) u LEFT JOIN information_schema.PROCESSLIST p ON p.ID = u.id"
                      + " WHERE u.id IS NOT NULL";
            List<Seen> out = new ArrayList<>();
            try (Connection c = ds.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql);
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String name = kind == Kind.POSTGRESQL ? rs.getString(1)
                            : new String(rs.getBytes(1), java.nio.charset.StandardCharsets.UTF_8);
                    int port = -1;
                    if (kind == Kind.POSTGRESQL) {
                        port = rs.getInt(3);
                        if (rs.wasNull()) {
                            port = -1;
                        }
                    } else {
                        port = portOf(rs.getString(3));
                    }
                    out.add(new Seen(new LockInfo(name, rs.getString(2), -1, null, null, true), port));
                }
            } catch (SQLException e) {
                throw new IllegalStateException("cannot list session locks on " + url + ": " + e.getMessage(), e);
            }
            return out;
        }

        /** The port of a MariaDB/MySQL {@code HOST} column ({@code 127.0.0.1:54321}), or -1. */
        private static int portOf(String host) {
            int colon = host == null ? -1 : host.lastIndexOf(':');
            if (colon < 0) {
                return -1;
            }
            try {
                return Integer.parseInt(host.substring(colon + 1));
            } catch (NumberFormatException e) {
                return -1; // a socket connection without a port
            }
        }

        @Override
        public String description() {
            return client.backend();
        }

        @Override
        public String shortName() {
            return url.toLowerCase(Locale.ROOT).startsWith("jdbc:mysql:") ? "mysql" : kind.id;
        }

        @Override
        public LockClient client() {
            return client;
        }

        @Override
        public Optional<InetSocketAddress> serverAddress() {
            if (kind == Kind.SQLITE) {
                return Optional.empty();
            }
            Matcher m = NETWORK_URL.matcher(url);
            if (!m.matches() || m.group(4).startsWith(",")) {
                return Optional.empty(); // several hosts (a primary and its standbys): no one server to proxy
            }
            String host = m.group(2).replace("[", "").replace("]", "");
            int port = m.group(3) != null ? Integer.parseInt(m.group(3)) : kind.defaultPort;
            return Optional.of(new InetSocketAddress(host, port));
        }

        @Override
        public String urlThroughProxy(int proxyPort) {
            if (kind == Kind.SQLITE) {
                return url;
            }
            Matcher m = NETWORK_URL.matcher(url);
            if (!m.matches()) {
                throw new IllegalStateException("cannot route " + url + " through a proxy");
            }
            return m.group(1) + "127.0.0.1:" + proxyPort + m.group(4);
        }

        @Override
        public Optional<String> sessionKillUnsupported() {
            return kind == Kind.SQLITE
                    ? Optional.of("SQLite is an embedded file: there is no server session to kill")
                    : Optional.empty();
        }

        /** @param order PostgreSQL: {@code backend_start} in epoch microseconds; MariaDB/MySQL: the connection id */
        private record Session(long id, int port, long order) {
        }

        private List<Session> sessions() throws SQLException {
            List<Session> out = new ArrayList<>();
            try (Connection c = ds.dataSource().getConnection()) {
                if (kind == Kind.POSTGRESQL) {
                    try (PreparedStatement ps = c.prepareStatement("SELECT pid, client_port,"
                            + " (extract(epoch FROM backend_start) * 1000000)::bigint FROM pg_stat_activity"
                            + " WHERE client_port IS NOT NULL AND pid <> pg_backend_pid()");
                         ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            out.add(new Session(rs.getLong(1), rs.getInt(2), rs.getLong(3)));
                        }
                    }
                } else {
                    try (PreparedStatement ps = c.prepareStatement("SELECT ID, HOST FROM information_schema.PROCESSLIST"
                            + " WHERE ID <> CONNECTION_ID()");
                         ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            int port = portOf(rs.getString(2));
                            if (port >= 0) {
                                out.add(new Session(rs.getLong(1), port, rs.getLong(1)));
                            }
                        }
                    }
                }
            }
            return out;
        }

        @Override
        public int killSessions(Set<Integer> clientPorts) {
            if (kind == Kind.SQLITE) {
                throw new UnsupportedOperationException(sessionKillUnsupported().orElseThrow());
            }
            int killed = 0;
            try {
                for (Session s : sessions()) {
                    if (!clientPorts.contains(s.port())) {
                        continue;
                    }
                    try (Connection c = ds.dataSource().getConnection()) {
                        if (kind == Kind.POSTGRESQL) {
                            try (PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
                                ps.setInt(1, (int) s.id());
                                try (ResultSet rs = ps.executeQuery()) {
                                    if (rs.next() && rs.getBoolean(1)) {
                                        killed++;
                                    }
                                }
                            }
                        } else {
                            try (Statement st = c.createStatement()) {
                                st.execute("KILL CONNECTION " + s.id());
                                killed++;
                            } catch (SQLException e) {
                                // it ended on its own meanwhile (unknown thread id)
                            }
                        }
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException("cannot list or kill sessions on " + url + ": " + e.getMessage(), e);
            }
            return killed;
        }

        @Override
        public long sessionMark() {
            if (kind == Kind.SQLITE) {
                return 0;
            }
            try (Connection c = ds.dataSource().getConnection();
                 PreparedStatement ps = c.prepareStatement(kind == Kind.POSTGRESQL
                         ? "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + 1"
                         : "SELECT MAX(ID) + 1 FROM information_schema.PROCESSLIST");
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                // every session that exists now sorts before the mark; every later one after it
                return rs.getLong(1);
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read the session mark on " + url + ": " + e.getMessage(), e);
            }
        }

        @Override
        public int countSessions(Set<Integer> clientPorts, long mark) {
            if (kind == Kind.SQLITE) {
                return 0;
            }
            try {
                return (int) sessions().stream()
                        .filter(s -> clientPorts.contains(s.port()) && s.order() < mark).count();
            } catch (SQLException e) {
                throw new IllegalStateException("cannot list sessions on " + url + ": " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            try {
                client.close();
            } finally {
                ds.close();
            }
        }

        @Override
        public String toString() {
            return description() + " " + table;
        }
    }
}
