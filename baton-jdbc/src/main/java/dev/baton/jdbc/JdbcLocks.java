package dev.baton.jdbc;

import dev.baton.DistributedLock;
import dev.baton.DistributedReadWriteLock;
import dev.baton.DialectMismatchException;
import dev.baton.ForcedRelease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockConfigurationException;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.LockNames;
import dev.baton.MissingSchemaException;
import dev.baton.PoolTooSmallException;
import dev.baton.UnsupportedBackendException;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.Ddl;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.lease.JdbcLeaseBackend;
import dev.baton.jdbc.lease.LeaseTable;
import dev.baton.jdbc.lease.PgReleaseListener;
import dev.baton.jdbc.session.SessionLockBackend;
import dev.baton.jdbc.session.SessionStatements;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.LockBackend;
import dev.baton.spi.LockClients;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Builds {@link JdbcLockClient}s: lease locks in one table of the database you already run.
 *
 * <p><b>Lease strategy</b> — re-entrant per thread, fair (a waiter takes a place in the lock's line
 * on the server, {@code <table>_queue}, and a free lock goes to the earliest live waiter). A hold ends when released, when its holder
 * stops renewing and the lease time passes by the <em>database</em> clock, or when the client is closed.
 * The fencing token is drawn from a database-wide sequence (PostgreSQL, MariaDB) or counter row (MySQL,
 * SQLite) at grant time, under the row lock, so it strictly increases per lock across holders, clients,
 * restarts and purges. On PostgreSQL, the head of the line is woken by {@code LISTEN/NOTIFY} (never
 * through a pooler: see {@link Builder#notificationDataSource}); on MariaDB by a named lock ({@code GET_LOCK})
 * its predecessor keeps; elsewhere, and where neither applies, waiters poll at a pace set by how fast the line
 * moves, bounded by the holder's expiry. Every write commits whatever the pool's auto-commit
 * default.
 *
 * <pre>{@code
 * try (JdbcLockClient locks = JdbcLocks.builder(dataSource).createTableIfMissing().build()) {
 *     try (Lease lease = locks.lock("nightly-report").acquire(Duration.ofSeconds(10))) {
 *         store.write(report, lease.fencingToken());
 *     }
 * }
 * }</pre>
 */
public final class JdbcLocks {
    /** The default table name. */
    public static final String DEFAULT_TABLE = "baton_locks";
    private static final Logger LOG = LoggerFactory.getLogger(JdbcLocks.class);
    private static final Pattern TABLE_NAME = Pattern.compile("[a-z_][a-z0-9_]*");
    private static final int MAX_TABLE_NAME = 48;
    /** The largest age {@link JdbcLockClient#purgeExpired} accepts: 3650 days (about 10 years). */
    static final Duration MAX_PURGE_AGE = Duration.ofDays(3650);

    private JdbcLocks() {
    }

    /** A builder over a {@link DataSource} (a HikariCP pool, or any other). */
    public static Builder builder(DataSource dataSource) {
        if (dataSource == null) {
            throw new IllegalArgumentException("dataSource must not be null");
        }
        return new Builder(dataSource);
    }

    /** Validates a table name: lower-case letters, digits and underscores, not starting with a digit. */
    static String validateTableName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("tableName must not be null or empty");
        }
        if (name.length() > MAX_TABLE_NAME) {
            throw new IllegalArgumentException("tableName '" + name + "' is " + name.length()
                    + " characters; at most " + MAX_TABLE_NAME + " (room for the _token_seq suffix)");
        }
        if (!TABLE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("tableName '" + name + "' is not allowed: use lower-case letters,"
                    + " digits and underscores, starting with a letter or underscore");
        }
        return name;
    }

    /** Settings of a JDBC lease client; see {@link AbstractClientBuilder} for the shared ones. */
    public static final class Builder extends AbstractClientBuilder<Builder> {
        private final DataSource dataSource;
        private String tableName = DEFAULT_TABLE;
        private Dialect dialect;
        private boolean createTable;
        private Strategy strategy = Strategy.LEASE;
        private Duration keepaliveIdle = Duration.ofSeconds(30);
        private Duration keepaliveInterval = Duration.ofSeconds(10);
        private int keepaliveCount = 3;
        /** Linux's largest {@code TCP_KEEPIDLE} and {@code TCP_KEEPINTVL}, which PostgreSQL applies to the socket. */
        private static final Duration MAX_KEEPALIVE = Duration.ofSeconds(32_767);
        private static final String KEEPALIVE_WHY = "Linux's largest TCP_KEEPIDLE and TCP_KEEPINTVL";
        private DataSource notificationDataSource;
        private boolean allowUnflushedCommits;
        private boolean poolerInSessionMode;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /** The lease table (default {@value JdbcLocks#DEFAULT_TABLE}); its sequence or counter takes a suffix. */
        public Builder tableName(String tableName) {
            this.tableName = validateTableName(tableName);
            return this;
        }

        /**
         * Forces a dialect instead of detecting it. Only {@link Dialect#MYSQL} on a MariaDB server differs
         * from detection; any other mismatch with the server is refused at {@link #build()}.
         */
        public Builder dialect(Dialect dialect) {
            if (dialect == null) {
                throw new IllegalArgumentException("dialect must not be null");
            }
            this.dialect = dialect;
            return this;
        }

        /** The strategy (default {@link Strategy#LEASE}). */
        public Builder strategy(Strategy strategy) {
            if (strategy == null) {
                throw new IllegalArgumentException("strategy must not be null");
            }
            this.strategy = strategy;
            return this;
        }

        /**
         * TCP keepalive of the session strategy's connections, applied by the PostgreSQL server to the
         * session ({@code tcp_keepalives_idle/interval/count}), so the server frees the locks of a client
         * whose host vanished without closing its connection (default 30 s, 10 s, 3). On MySQL/MariaDB,
         * keepalive is a driver setting ({@code tcpKeepAlive} in the URL); the client's own probe, every
         * renewal interval while it holds locks, keeps the session from reaching {@code wait_timeout}. A
         * session the server closes while the client holds nothing is replaced at the next acquire.
         */
        public Builder sessionKeepalive(Duration idle, Duration interval, int count) {
            this.keepaliveIdle = within("keepalive idle", idle, Duration.ofSeconds(1), MAX_KEEPALIVE, KEEPALIVE_WHY);
            this.keepaliveInterval = within("keepalive interval", interval, Duration.ofSeconds(1), MAX_KEEPALIVE,
                    KEEPALIVE_WHY);
            if (count < 1 || count > 127) {
                throw new IllegalArgumentException("keepalive count must be at least 1 and at most 127 (Linux's"
                        + " largest TCP_KEEPCNT), was " + count);
            }
            this.keepaliveCount = count;
            return this;
        }

        /**
         * PostgreSQL, lease strategy: the data source of the one connection per client that {@code LISTEN}s for
         * releases, so waiters in other clients are woken by {@code NOTIFY}. Give it a direct connection when the
         * main data source passes through a pooler (PgBouncer): {@code LISTEN} does not work through one in
         * transaction mode, so without it such a client does not listen and its waiters poll
         * ({@code minPollInterval}..{@code maxPollInterval}). Default: the main data source, unless
         * {@link #build()} detects a pooler there (by the server session's process id, on one connection). The
         * connection is held for the client's life and discarded (never returned to a pool) when it closes.
         *
         * @throws IllegalArgumentException if {@code notifications} is null
         */
        public Builder notificationDataSource(DataSource notifications) {
            if (notifications == null) {
                throw new IllegalArgumentException("notificationDataSource must not be null");
            }
            this.notificationDataSource = notifications;
            return this;
        }

        /**
         * Accepts a server that acknowledges a commit before it is on disk. Without it, {@link #build()} refuses
         * MariaDB and MySQL servers whose {@code innodb_flush_log_at_trx_commit} is not 1 (or MariaDB's 3), or
         * that write a binary log ({@code log_bin}) with {@code sync_binlog} other than 1, and PostgreSQL servers
         * with {@code fsync} off: there a crash can lose an acknowledged grant or renewal (two holders at once)
         * or a token draw (a fencing token handed out twice). (PostgreSQL's {@code synchronous_commit} needs no
         * opt-in: grants, renewals and token draws set it {@code on} for their own transaction.) Only for data that
         * may be lost: a test server, or a host whose locks need not survive a server crash.
         */
        public Builder allowUnflushedCommits() {
            this.allowUnflushedCommits = true;
            return this;
        }

        /**
         * Session strategy on PostgreSQL: its data source passes through a pooler in <em>session</em> mode (each client
         * connection keeps one server session for its life, PgBouncer {@code pool_mode=session}), so {@link #build()}
         * accepts it. Without it, a pooler is refused whatever its mode, before any lock: the client sees that a pooler
         * answered the login, but not its mode, and a pooler in transaction mode moves each statement between server
         * sessions, leaving locks behind on sessions other clients borrow. With it, only a session that moves between
         * two statements is refused (or, later, its locks reported lost). No effect on the other strategies.
         */
        public Builder poolerInSessionMode() {
            this.poolerInSessionMode = true;
            return this;
        }

        /** Creates the table (and its sequence or counter) at {@link #build()} if missing, from the shipped DDL. */
        public Builder createTableIfMissing() {
            this.createTable = true;
            return this;
        }

        /**
         * Connects, detects the dialect, checks (or creates) the table and starts the client.
         *
         * @throws dev.baton.UnsupportedBackendException if the database (or its version) is not supported, the
         *                              session strategy is asked of SQLite, or its connections pass through a
         *                              pooler in transaction mode, or the server acknowledges commits before they
         *                              are on disk and {@link #allowUnflushedCommits()} was not asked
         * @throws dev.baton.DialectMismatchException if the dialect set conflicts with the database
         * @throws dev.baton.MissingSchemaException if the tables are missing and {@link #createTableIfMissing()}
         *                              was not asked
         * @throws dev.baton.PoolTooSmallException if a HikariCP pool is too small for the session strategy
         * @throws dev.baton.LockConfigurationException if a {@link #notificationDataSource} was given for another
         *                              dialect or strategy, or passes through a pooler
         * @throws LockBackendException if the database cannot be reached
         */
        @Override
        public JdbcLockClient build() {
            var settings = settings();
            LeaseTable table;
            boolean serverIsMariaDb;
            SessionStatements sessionStatements = null;
            try (Connection c = dataSource.getConnection()) {
                Dialect detected = Dialect.detect(c);
                serverIsMariaDb = detected == Dialect.MARIADB;
                Dialect chosen = dialect == null ? detected : dialect;
                if (chosen != detected && !(chosen == Dialect.MYSQL && detected == Dialect.MARIADB)) {
                    throw new DialectMismatchException("dialect " + chosen + " was set but the database is " + detected);
                }
                table = LeaseTable.of(chosen, tableName);
                if (!allowUnflushedCommits) {
                    checkFlushOnCommit(c, chosen);
                }
                if (strategy == Strategy.SESSION) {
                    // refuses SQLite, which has no session locks
                    sessionStatements = SessionStatements.of(chosen, tableName);
                    checkPoolSize(dataSource);
                }
                LeaseTable t = table;
                // the DDL commits whatever the pool's auto-commit default
                ConnectionSupport.autoCommitted(c, DialectTraits.of(chosen), x -> {
                    prepareTables(x, t);
                    return null;
                });
            } catch (SQLException | LockException e) {
                if (strategy == Strategy.SESSION && SessionLockBackend.poolerStatementClash(e)) {
                    // PostgreSQL statements named by this connection met another client's on one server
                    // session: only a pooler sharing server sessions does that, whatever the URL says
                    throw new UnsupportedBackendException(SessionLockBackend.poolerRefusal("jdbc-session (table " + tableName
                            + ")", "checking the tables failed because " + e.getMessage()), e);
                }
                if (e instanceof LockException le) {
                    throw le;
                }
                SQLException se = (SQLException) e;
                throw new LockBackendException("jdbc-lease", "cannot connect to build the lock client: "
                        + se.getMessage() + " (SQL state " + se.getSQLState() + ")", se);
            }
            Boolean mainPooled = table.releaseChannel() != null && strategy == Strategy.LEASE
                    ? throughPooler(dataSource, "") : null;
            JdbcLeaseBackend leaseBackend = JdbcLeaseBackend.create(dataSource, table,
                    listenOn(table, settings, mainPooled), Boolean.FALSE.equals(mainPooled), serverIsMariaDb);
            LockBackend backend = strategy == Strategy.LEASE ? leaseBackend
                    : SessionLockBackend.create(dataSource, sessionStatements, new SessionLockBackend.SessionOptions(
                            keepaliveIdle, keepaliveInterval, keepaliveCount, settings.renewInterval(),
                            poolerInSessionMode));
            LockClient core = LockClients.create(backend, settings);
            return new Client(core, leaseBackend, table, strategy, createTable);
        }

        /**
         * Refuses a server that acknowledges commits before they are on disk (see {@link #allowUnflushedCommits()}).
         * Reads global settings only: one statement, changing nothing.
         */
        private void checkFlushOnCommit(Connection c, Dialect chosen) throws SQLException {
            String unflushed = null;
            if (chosen == Dialect.MARIADB || chosen == Dialect.MYSQL) {
                try (Statement st = c.createStatement();
                     var rs = st.executeQuery("SELECT @@global.innodb_flush_log_at_trx_commit, @@global.log_bin,"
                             + " @@global.sync_binlog")) {
                    rs.next();
                    long flush = rs.getLong(1);
                    long logBin = rs.getLong(2);
                    long syncBinlog = rs.getLong(3);
                    if (flush != 1 && flush != 3) {
                        unflushed = "innodb_flush_log_at_trx_commit is " + flush + " on this server (1 flushes the"
                                + " log at every commit; " + (flush == 2 ? "2 writes it to the operating system and"
                                + " flushes it once a second, so a crash of the host" : "0 writes and flushes it once"
                                + " a second, so a crash of the server") + " loses the last second's commits)";
                    } else if (logBin != 0 && syncBinlog != 1) {
                        unflushed = "the server writes a binary log (log_bin is ON) and sync_binlog is " + syncBinlog
                                + " (1 flushes it at every commit; a crash recovery rolls back a commit that is not"
                                + " in the flushed binary log)";
                    }
                }
            } else if (chosen == Dialect.POSTGRESQL) {
                try (Statement st = c.createStatement();
                     var rs = st.executeQuery("SELECT current_setting('fsync')")) {
                    rs.next();
                    if ("off".equalsIgnoreCase(rs.getString(1))) {
                        unflushed = "fsync is off on this server (a crash of the host loses commits the server"
                                + " acknowledged)";
                    }
                }
            }
            if (unflushed != null) {
                throw new UnsupportedBackendException("jdbc-" + strategy.name().toLowerCase() + "/" + chosen.id()
                        + " (table " + tableName + "): " + unflushed + ". A lost grant or renewal lets a second"
                        + " client hold a lock its first holder still believes it holds, and a lost token draw hands"
                        + " a fencing token out again. Make commits durable on the server, or call"
                        + " allowUnflushedCommits() on the builder to accept that");
            }
        }

        /** Connections the session strategy keeps from the pool for the client's life: main and waiting session. */
        static final int SESSION_CONNECTIONS = 2;

        /**
         * Refuses a pool too small for the session strategy's two dedicated connections. The maximum is read
         * from HikariCP ({@link ConnectionSupport#maximumPoolSize}); other pools are not checked.
         */
        private static void checkPoolSize(DataSource dataSource) {
            java.util.OptionalInt size = ConnectionSupport.maximumPoolSize(dataSource);
            if (size.isEmpty()) {
                return; // not HikariCP: documented in docs/SESSION.md
            }
            int max = size.getAsInt();
            if (max < SESSION_CONNECTIONS) {
                throw new PoolTooSmallException("the session strategy keeps " + SESSION_CONNECTIONS + " connections of the"
                        + " pool for the client's life (one session holds the locks, one waits on the server), but"
                        + " the pool's maximumPoolSize is " + max + ": set it to at least " + SESSION_CONNECTIONS
                        + " plus the connections your application uses from the same pool");
            }
        }

        /** Whether {@code ds} reaches PostgreSQL through a pooler ({@link PgReleaseListener#throughPooler}). */
        private static boolean throughPooler(DataSource ds, String which) {
            try {
                return PgReleaseListener.throughPooler(ds);
            } catch (SQLException e) {
                throw new LockBackendException("jdbc-lease/postgresql", "cannot check whether the " + which
                        + "data source passes through a pooler: " + e.getMessage() + " (SQL state " + e.getSQLState()
                        + ")", e);
            }
        }

        /**
         * Where the PostgreSQL lease strategy {@code LISTEN}s for releases: the notification data source if one
         * was given (refused if it passes through a pooler), else the main one unless it passes through a
         * pooler — there {@code LISTEN} would stay on whichever server session the pooler lent, and deliver
         * the releases to other applications' connections — in which case none, and waiters in other clients
         * poll.
         *
         * @param mainPooled whether the main data source passes through a pooler (PostgreSQL lease strategy), else null
         */
        private DataSource listenOn(LeaseTable table, ClientSettings settings, Boolean mainPooled) {
            Dialect chosen = table.dialect();
            boolean listens = table.releaseChannel() != null && strategy == Strategy.LEASE;
            if (notificationDataSource != null && !listens) {
                throw new LockConfigurationException("notificationDataSource is used only by the lease strategy on PostgreSQL"
                        + " (LISTEN/NOTIFY); this client is the " + strategy.name().toLowerCase() + " strategy on "
                        + chosen.id());
            }
            if (!listens) {
                return null;
            }
            DataSource candidate = notificationDataSource != null ? notificationDataSource : dataSource;
            boolean pooled = candidate == dataSource ? mainPooled : throughPooler(candidate, "notification ");
            if (!pooled) {
                return candidate;
            }
            if (candidate == notificationDataSource) {
                throw new LockConfigurationException("notificationDataSource passes through a pooler (its server session is not"
                        + " the one the login reported): a LISTEN there would stay on a pooled server session and"
                        + " its notifications reach other applications' connections. Give it a DataSource that"
                        + " connects to PostgreSQL directly");
            }
            LOG.info("table {}: the data source passes through a pooler; no LISTEN through it (waiters in other"
                    + " clients poll every {}..{}); give the builder notificationDataSource(...) with a direct"
                    + " connection to be woken by NOTIFY", tableName, settings.minPollInterval(),
                    settings.maxPollInterval());
            return null;
        }

        private void prepareTables(Connection c, LeaseTable table) throws SQLException {
            Dialect chosen = table.dialect();
            if (createTable) {
                table.createIfMissing(c);
                if (strategy == Strategy.SESSION) {
                    try (Statement st = c.createStatement()) {
                        for (String sql : Ddl.statements(chosen.sessionSchemaResource(), tableName)) {
                            st.execute(sql);
                        }
                    }
                }
            } else {
                checkTables(c, table);
                if (strategy == Strategy.SESSION) {
                    checkObject(c, table, tableName + "_names", "SELECT 1 FROM " + tableName + "_names WHERE 1 = 0",
                            chosen.sessionSchemaResource());
                }
            }
        }

        private static void checkTables(Connection c, LeaseTable table) throws SQLException {
            for (String object : table.requiredObjects()) {
                checkObject(c, table, object, table.probe(object), table.dialect().schemaResource());
            }
        }

        private static void checkObject(Connection c, LeaseTable table, String object, String probe, String ddl)
                throws SQLException {
            try (Statement st = c.createStatement()) {
                st.execute(probe);
            } catch (SQLException e) {
                throw new MissingSchemaException("the " + table.dialect().id() + " lock tables are not ready: '" + object
                        + "' is missing or unreadable (" + e.getMessage() + "). Apply the DDL in " + ddl
                        + " (shipped in baton-jdbc), or call createTableIfMissing() on the builder", e);
            }
        }
    }

    /** Delegates the API to the core client and adds the table's maintenance. */
    private static final class Client implements JdbcLockClient {
        private final LockClient core;
        private final JdbcLeaseBackend backend;
        private final LeaseTable table;
        private final Strategy strategy;
        private final boolean createTable;
        private volatile TransactionStrategies transactional;

        Client(LockClient core, JdbcLeaseBackend backend, LeaseTable table, Strategy strategy, boolean createTable) {
            this.core = core;
            this.backend = backend;
            this.table = table;
            this.strategy = strategy;
            this.createTable = createTable;
        }

        @Override
        public Strategy strategy() {
            return strategy;
        }

        @Override
        public Dialect dialect() {
            return table.dialect();
        }

        @Override
        public String tableName() {
            return table.table();
        }

        @Override
        public int purgeExpired(Duration olderThan) {
            if (olderThan == null) {
                throw new IllegalArgumentException("olderThan must not be null");
            }
            if (olderThan.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("olderThan must be at least 1 s, was " + olderThan);
            }
            AbstractClientBuilder.within("olderThan", olderThan, Duration.ofSeconds(1), MAX_PURGE_AGE,
                    "a row that ended that long ago is long purgeable, and now minus the age must stay a valid time"
                    + " in every database");
            return backend.purge(olderThan);
        }

        @Override
        public Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
            LockNames.validate(name);
            if (token == null) {
                throw new IllegalArgumentException("token must not be null (use OptionalLong.empty())");
            }
            return backend.forceRelease(name, token);
        }

        @Override
        public Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
            LockNames.validate(name);
            if (owner == null || owner.isEmpty()) {
                throw new IllegalArgumentException("owner must be a waiter's id (as LockInfo.line() shows it), was "
                        + (owner == null ? "null" : "empty"));
            }
            return backend.removeFromLine(name, owner);
        }

        @Override
        public DistributedLock lock(String name) {
            return core.lock(name);
        }

        @Override
        public DistributedReadWriteLock readWriteLock(String name) {
            return core.readWriteLock(name);
        }

        @Override
        public <T> T withLock(String name, Duration maxWait, Supplier<T> task) {
            return core.withLock(name, maxWait, task);
        }

        @Override
        public void withLock(String name, Duration maxWait, Runnable task) {
            core.withLock(name, maxWait, task);
        }

        @Override
        public List<LockInfo> list() {
            return core.list();
        }

        @Override
        public String clientId() {
            return core.clientId();
        }

        @Override
        public String backend() {
            return core.backend();
        }

        /** Created on first use: most clients never call the transaction strategies. */
        private TransactionStrategies transactional() {
            TransactionStrategies t = transactional;
            if (t == null) {
                synchronized (this) {
                    t = transactional;
                    if (t == null) {
                        t = new TransactionStrategies(backend.dataSource(), table, core.clientId(), createTable);
                        transactional = t;
                    }
                }
            }
            return t;
        }

        @Override
        public <T> T inTransaction(String name, Duration wait, TransactionWork<T> work) {
            return transactional().inTransaction(name, wait, work);
        }

        @Override
        public OptimisticLock optimistic(String name) {
            return transactional().optimistic(name);
        }

        @Override
        public boolean runOnce(String name, Duration atMostFor, Duration atLeastFor, Runnable task) {
            return transactional().runOnce(name, atMostFor, atLeastFor, task);
        }

        @Override
        public void close() {
            core.close();
            transactional().close();
        }

        @Override
        public String toString() {
            return "JdbcLockClient[" + core.clientId() + " on " + core.backend() + "]";
        }
    }
}
