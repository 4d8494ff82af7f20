package dev.baton.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * Where the servers are and how the benchmark connects to them. Every client of every workload gets its
 * own pool ({@link #pool}), so "independent clients" share no connection. Addresses can be overridden
 * with system properties (bench.pg, bench.mariadb, bench.redis, bench.zk). ZooKeeper is the server process
 * {@code scripts/start-servers.sh} starts (127.0.0.1:2181), like the other servers: its own JVM, not the
 * benchmark's.
 */
final class Servers {
    static final String PG_URL = System.getProperty("bench.pg",
            "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
    static final String MARIADB_URL = System.getProperty("bench.mariadb",
            "jdbc:mariadb://127.0.0.1:3306/test?user=root");
    static final String REDIS_URI = System.getProperty("bench.redis", "redis://127.0.0.1:6379");
    static final Path SQLITE_FILE = Path.of(System.getProperty("bench.sqlite",
            System.getProperty("java.io.tmpdir") + "/baton-bench.db"));

    /** MariaDB user the W3 client connects as, so PROCESSLIST can count its connections. */
    static final String MARIADB_W3_USER = "baton_bench";

    private Servers() {
    }

    static final String ZK = System.getProperty("bench.zk", "127.0.0.1:2181");

    static String zk() {
        return ZK;
    }

    enum Db {
        POSTGRESQL("postgresql"), MARIADB("mariadb"), SQLITE("sqlite");

        final String id;

        Db(String id) {
            this.id = id;
        }

        String url() {
            return switch (this) {
                case POSTGRESQL -> PG_URL;
                case MARIADB -> MARIADB_URL;
                case SQLITE -> "jdbc:sqlite:" + SQLITE_FILE;
            };
        }
    }

    /**
     * A pool of at most {@code maxSize} connections, all statements counted. {@code appName} tags the
     * connections on PostgreSQL (pg_stat_activity.application_name) so W3 can count them on the server.
     */
    static CountingDataSource pool(Db db, String appName, int maxSize) {
        return pool(db, appName, maxSize, null);
    }

    static CountingDataSource pool(Db db, String appName, int maxSize, String mariadbUser) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(db.url());
        c.setPoolName(appName);
        c.setMaximumPoolSize(maxSize);
        c.setMinimumIdle(maxSize); // a fixed-size pool, as HikariCP recommends: connections on the server are then known
        c.setConnectionTimeout(30_000);
        switch (db) {
            case POSTGRESQL -> {
                c.addDataSourceProperty("ApplicationName", appName);
                c.addDataSourceProperty("tcpKeepAlive", "true");
            }
            case MARIADB -> {
                if (mariadbUser != null) {
                    c.setJdbcUrl(db.url().replaceAll("user=[^&]*", "user=" + mariadbUser));
                }
                c.addDataSourceProperty("tcpKeepAlive", "true");
            }
            case SQLITE -> {
                c.setConnectionInitSql("PRAGMA busy_timeout = 10000");
            }
        }
        return new CountingDataSource(new HikariDataSource(c));
    }

    /** One unpooled connection (raw primitives and floors hold one each). */
    static Connection connect(Db db, String appName) throws SQLException {
        Properties p = new Properties();
        if (db == Db.POSTGRESQL) {
            p.setProperty("ApplicationName", appName);
        }
        Connection c = DriverManager.getConnection(db.url(), p);
        if (db == Db.SQLITE) {
            try (var st = c.createStatement()) {
                st.execute("PRAGMA busy_timeout = 10000");
            }
        }
        c.setAutoCommit(true);
        return c;
    }

    /** Puts the SQLite file in WAL mode once (the mode is stored in the file). */
    static void prepareSqlite() throws Exception {
        Files.createDirectories(SQLITE_FILE.toAbsolutePath().getParent());
        try (Connection c = connect(Db.SQLITE, "prepare"); var st = c.createStatement()) {
            st.execute("PRAGMA journal_mode = WAL");
        }
    }

    /** Creates the MariaDB user W3 counts connections by (root may create users on the test server). */
    static void prepareMariaDbUser() throws SQLException {
        try (Connection c = connect(Db.MARIADB, "prepare"); var st = c.createStatement()) {
            st.execute("CREATE USER IF NOT EXISTS '" + MARIADB_W3_USER + "'@'%'");
            st.execute("CREATE USER IF NOT EXISTS '" + MARIADB_W3_USER + "'@'localhost'");
            st.execute("GRANT ALL ON test.* TO '" + MARIADB_W3_USER + "'@'%'");
            st.execute("GRANT ALL ON test.* TO '" + MARIADB_W3_USER + "'@'localhost'");
        }
    }
}
