package dev.baton.jdbc;

import dev.baton.DistributedLock;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LockClients;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Builds {@link JdbcLockClient}s: lease locks in one table of the database you already run.
 *
 * <p><b>Lease strategy</b> — re-entrant per thread, not fair. A hold ends when released, when its holder
 * stops renewing and the lease time passes by the <em>database</em> clock, or when the client is closed.
 * The fencing token is drawn from a database-wide sequence (PostgreSQL, MariaDB) or counter row (MySQL,
 * SQLite) at grant time, under the row lock, so it strictly increases per lock across holders, clients,
 * restarts and purges. On PostgreSQL, waiters in other processes are woken by {@code LISTEN/NOTIFY}; on
 * the others, at the holder's expiry or by a bounded backoff poll.
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
    private static final Pattern TABLE_NAME = Pattern.compile("[a-z_][a-z0-9_]*");
    private static final int MAX_TABLE_NAME = 48;

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

        /** Creates the table (and its sequence or counter) at {@link #build()} if missing, from the shipped DDL. */
        public Builder createTableIfMissing() {
            this.createTable = true;
            return this;
        }

        /**
         * Connects, detects the dialect, checks (or creates) the table and starts the client.
         *
         * @throws LockException        if the database is not supported, the dialect conflicts with it, or the
         *                              table is missing and {@link #createTableIfMissing()} was not asked
         * @throws LockBackendException if the database cannot be reached
         */
        @Override
        public JdbcLockClient build() {
            var settings = settings();
            LeaseTable table;
            try (Connection c = dataSource.getConnection()) {
                Dialect detected = Dialect.detect(c);
                Dialect chosen = dialect == null ? detected : dialect;
                if (chosen != detected && !(chosen == Dialect.MYSQL && detected == Dialect.MARIADB)) {
                    throw new LockException("dialect " + chosen + " was set but the database is " + detected);
                }
                table = switch (chosen) {
                    case POSTGRESQL -> new PostgresLeaseTable(tableName);
                    case MARIADB -> new MySqlFamilyLeaseTable(tableName, true);
                    case MYSQL -> new MySqlFamilyLeaseTable(tableName, false);
                    case SQLITE -> new SqliteLeaseTable(tableName);
                };
                if (createTable) {
                    table.createIfMissing(c);
                } else {
                    checkTables(c, table);
                }
            } catch (SQLException e) {
                throw new LockBackendException("jdbc-lease", "cannot connect to build the lock client: "
                        + e.getMessage() + " (SQL state " + e.getSQLState() + ")", e);
            }
            JdbcLeaseBackend backend = new JdbcLeaseBackend(dataSource, table);
            LockClient core = LockClients.create(backend, settings);
            return new Client(core, backend, table);
        }

        private static void checkTables(Connection c, LeaseTable table) throws SQLException {
            for (String object : table.requiredObjects()) {
                boolean ac = c.getAutoCommit();
                try (Statement st = c.createStatement()) {
                    st.execute(table.probe(object));
                } catch (SQLException e) {
                    throw new LockException("the " + table.dialect().id() + " lease table is not ready: '" + object
                            + "' is missing or unreadable (" + e.getMessage() + "). Apply the DDL in "
                            + table.dialect().schemaResource() + " (shipped in baton-jdbc), or call "
                            + "createTableIfMissing() on the builder", e);
                } finally {
                    if (!ac) {
                        c.rollback();
                    }
                }
            }
        }
    }

    /** Delegates the API to the core client and adds the table's maintenance. */
    private static final class Client implements JdbcLockClient {
        private final LockClient core;
        private final JdbcLeaseBackend backend;
        private final LeaseTable table;

        Client(LockClient core, JdbcLeaseBackend backend, LeaseTable table) {
            this.core = core;
            this.backend = backend;
            this.table = table;
        }

        @Override
        public Dialect dialect() {
            return table.dialect();
        }

        @Override
        public String tableName() {
            return table.table;
        }

        @Override
        public int purgeExpired(Duration olderThan) {
            if (olderThan == null) {
                throw new IllegalArgumentException("olderThan must not be null");
            }
            if (olderThan.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("olderThan must be at least 1 s, was " + olderThan);
            }
            return backend.purge(olderThan);
        }

        @Override
        public DistributedLock lock(String name) {
            return core.lock(name);
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

        @Override
        public void close() {
            core.close();
        }

        @Override
        public String toString() {
            return "JdbcLockClient[" + core.clientId() + " on " + core.backend() + "]";
        }
    }
}
