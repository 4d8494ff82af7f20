package dev.baton.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.LockClient;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.LockFixture;
import dev.baton.faultproxy.FaultProxy;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;

/**
 * Binds the contract suite to a real database. Each client gets its own HikariCP pool over a data source
 * that records the server session of every physical connection (so a test can kill them), and, for
 * network databases, its own {@link FaultProxy} (so a test can cut its network path).
 */
abstract class JdbcFixture implements LockFixture {
    private final Map<LockClient, Resources> clients = new ConcurrentHashMap<>();

    private record Resources(HikariDataSource pool, TrackingDataSource tracking, FaultProxy proxy) {
    }

    /** The lease table the contract suite uses. */
    abstract String table();

    /** A driver data source; {@code proxyPort} is the port to reach the server through, or -1 for embedded. */
    abstract DataSource rawDataSource(int proxyPort);

    /** The server's host and port, or null for an embedded database. */
    abstract String[] hostAndPort();

    /** A statement returning the server session id of a connection, or null for an embedded database. */
    abstract String sessionIdQuery();

    abstract Connection admin() throws SQLException;

    abstract void killSession(Connection admin, long sessionId) throws SQLException;

    /** Sets the row's expiry to just before the database's now. */
    abstract String expireSql();

    Dialect forcedDialect() {
        return null;
    }

    Strategy strategy() {
        return Strategy.LEASE;
    }

    /** Adjusts each client's pool (e.g. {@code autoCommit=false}); by default nothing. */
    void configure(HikariConfig pool) {
    }

    /** How many of these server session ids are still alive; unsupported for an embedded database. */
    int countLive(Connection admin, List<Long> ids) throws SQLException {
        throw new UnsupportedOperationException(name() + " is embedded: it has no server sessions");
    }

    @Override
    public int serverSessions(LockClient client) {
        try (Connection admin = admin()) {
            return countLive(admin, resources(client).tracking.sessionIds());
        } catch (SQLException e) {
            throw new IllegalStateException("could not count the sessions of " + client.clientId(), e);
        }
    }

    @Override
    public LockClient newClient(ClientConfig config) {
        String[] hp = hostAndPort();
        FaultProxy proxy = hp == null ? null : new FaultProxy(hp[0], Integer.parseInt(hp[1]));
        TrackingDataSource tracking = new TrackingDataSource(rawDataSource(proxy == null ? -1 : proxy.port()),
                sessionIdQuery());
        HikariConfig hc = new HikariConfig();
        hc.setDataSource(tracking);
        hc.setPoolName("contract-" + name());
        hc.setMaximumPoolSize(4);
        hc.setMinimumIdle(0);
        hc.setConnectionTimeout(3000);
        hc.setValidationTimeout(1000);
        configure(hc);
        HikariDataSource pool = new HikariDataSource(hc);
        try {
            JdbcLocks.Builder b = JdbcLocks.builder(pool).tableName(table()).leaseTime(config.leaseTime())
                    .maxPollInterval(config.maxPollInterval())
                    .minPollInterval(Duration.ofMillis(Math.min(10, config.maxPollInterval().toMillis())))
                    .createTableIfMissing().strategy(strategy());
            if (forcedDialect() != null) {
                b.dialect(forcedDialect());
            }
            JdbcLockClient client = b.build();
            clients.put(client, new Resources(pool, tracking, proxy));
            return new ClosingClient(client, () -> release(client));
        } catch (RuntimeException e) {
            pool.close();
            if (proxy != null) {
                proxy.close();
            }
            throw e;
        }
    }

    private void release(LockClient client) {
        Resources r = clients.remove(client);
        if (r != null) {
            r.pool.close();
            if (r.proxy != null) {
                r.proxy.close();
            }
        }
    }

    private Resources resources(LockClient client) {
        LockClient inner = client instanceof ClosingClient cc ? cc.delegate() : client;
        Resources r = clients.get(inner);
        if (r == null) {
            throw new IllegalArgumentException("not a client of this fixture: " + client);
        }
        return r;
    }

    @Override
    public void killServerSessions(LockClient client) {
        TrackingDataSource t = resources(client).tracking;
        if (sessionIdQuery() == null) {
            t.closeAll();
            return;
        }
        try (Connection admin = admin()) {
            for (long id : t.sessionIds()) {
                killSession(admin, id);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not kill sessions of " + client.clientId(), e);
        }
    }

    @Override
    public AutoCloseable cutOff(LockClient client) {
        FaultProxy proxy = resources(client).proxy;
        proxy.fault(FaultProxy.Mode.BLACKHOLE);
        return () -> proxy.heal();
    }

    @Override
    public void expireOnServer(String lockName) {
        try (Connection admin = admin(); PreparedStatement ps = admin.prepareStatement(expireSql())) {
            ps.setString(1, lockName);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("no row for lock '" + lockName + "'");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not expire '" + lockName + "'", e);
        }
    }

    @Override
    public int placesInLine(String lockName) {
        try (Connection admin = admin();
             PreparedStatement ps = admin.prepareStatement("SELECT COUNT(*) FROM " + table() + "_queue WHERE name = ?")) {
            ps.setString(1, lockName);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not count the line of '" + lockName + "'", e);
        }
    }

    @Override
    public boolean notifiesWaiters() {
        return false;
    }

    @Override
    public void close() {
        for (LockClient c : List.copyOf(clients.keySet())) {
            try {
                c.close();
            } finally {
                release(c);
            }
        }
    }

    /** Closes the fixture's per-client resources when the test closes the client. */
    private static final class ClosingClient extends ForwardingLockClient {
        private final Runnable onClose;

        ClosingClient(LockClient delegate, Runnable onClose) {
            super(delegate);
            this.onClose = onClose;
        }

        @Override
        public void close() {
            try {
                super.close();
            } finally {
                onClose.run();
            }
        }
    }

    /** Records every physical connection's server session id, or the connection itself when embedded. */
    static final class TrackingDataSource implements DataSource {
        private final DataSource raw;
        private final String sessionIdQuery;
        private final List<Long> ids = new CopyOnWriteArrayList<>();
        private final List<Connection> connections = new CopyOnWriteArrayList<>();

        TrackingDataSource(DataSource raw, String sessionIdQuery) {
            this.raw = raw;
            this.sessionIdQuery = sessionIdQuery;
        }

        List<Long> sessionIds() {
            return List.copyOf(ids);
        }

        void closeAll() {
            for (Connection c : connections) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // already gone
                }
            }
        }

        private Connection track(Connection c) throws SQLException {
            connections.add(c);
            if (sessionIdQuery != null) {
                try (Statement st = c.createStatement(); var rs = st.executeQuery(sessionIdQuery)) {
                    rs.next();
                    ids.add(rs.getLong(1));
                }
            }
            return c;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return track(raw.getConnection());
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return track(raw.getConnection(username, password));
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return raw.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            raw.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            raw.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return raw.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return raw.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return raw.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return raw.isWrapperFor(iface);
        }
    }
}
