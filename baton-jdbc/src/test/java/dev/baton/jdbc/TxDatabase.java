package dev.baton.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.testkit.TestServers;
import org.postgresql.ds.PGSimpleDataSource;
import org.mariadb.jdbc.MariaDbDataSource;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A database the transaction-strategy tests run on: HikariCP pools straight to the server (no proxy), and
 * clients on the table {@value #TABLE}, so these tests never touch the contract suite's tables. Close it to
 * close every pool and client it made.
 */
final class TxDatabase implements AutoCloseable {
    static final String TABLE = "baton_txtest";
    static final Path SQLITE_FILE = Path.of("target", "sqlite-tx", "tx.db").toAbsolutePath();

    private final String name;
    private final Dialect dialect;
    private final String url;
    private final boolean autoCommit;
    private final List<AutoCloseable> opened = new ArrayList<>();

    private TxDatabase(String name, Dialect dialect, String url) {
        this(name, dialect, url, true);
    }

    private TxDatabase(String name, Dialect dialect, String url, boolean autoCommit) {
        this.name = name;
        this.dialect = dialect;
        this.url = url;
        this.autoCommit = autoCommit;
    }

    /**
     * Every dialect, plus PostgreSQL and MariaDB through pools whose connections default to
     * {@code autoCommit=false} (as Spring and many HikariCP settings do): a write that forgets to commit is
     * rolled back when its connection returns to such a pool. (Not the MySQL dialect and SQLite as well: they
     * share MariaDB's and the driver's code paths, and each variant costs CI time.)
     */
    static List<TxDatabase> all() {
        return List.of(postgres(), mariadb(), mysqlDialect(), sqlite(), autoCommitOff(postgres()),
                autoCommitOff(mariadb()));
    }

    /** The same database through pools whose connections default to {@code autoCommit=false}. */
    static TxDatabase autoCommitOff(TxDatabase db) {
        return new TxDatabase(db.name + "-autocommit-off", db.dialect, db.url, false);
    }

    static List<TxDatabase> autoCommitOff() {
        return List.of(autoCommitOff(postgres()), autoCommitOff(mariadb()));
    }

    static TxDatabase postgres() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        return new TxDatabase("postgresql", Dialect.POSTGRESQL, "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
                + "&socketTimeout=10&connectTimeout=3&tcpKeepAlive=true");
    }

    static TxDatabase mariadb() {
        TestServers.require("MariaDB", "127.0.0.1", 3306);
        return new TxDatabase("mariadb", Dialect.MARIADB, "jdbc:mariadb://127.0.0.1:3306/test?user=root"
                + "&socketTimeout=10000&connectTimeout=3000&tcpKeepAlive=true");
    }

    /** The MYSQL dialect (counter row, two-phase grants, innodb_lock_wait_timeout) on the MariaDB server. */
    static TxDatabase mysqlDialect() {
        TestServers.require("MariaDB", "127.0.0.1", 3306);
        return new TxDatabase("mysql-dialect-on-mariadb", Dialect.MYSQL, "jdbc:mariadb://127.0.0.1:3306/test?user=root"
                + "&socketTimeout=10000&connectTimeout=3000&tcpKeepAlive=true");
    }

    static TxDatabase sqlite() {
        try {
            Files.createDirectories(SQLITE_FILE.getParent());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        return new TxDatabase("sqlite", Dialect.SQLITE, null);
    }

    Dialect dialect() {
        return dialect;
    }

    /** The table name for this database's clients: the MySQL dialect needs its own (a counter, not a sequence). */
    String table() {
        return dialect == Dialect.MYSQL ? TABLE + "_my" : TABLE;
    }

    /** A raw data source; {@code urlSuffix} is appended to the URL of a network database. */
    DataSource raw(String urlSuffix) {
        try {
            return switch (dialect) {
                case POSTGRESQL -> {
                    PGSimpleDataSource ds = new PGSimpleDataSource();
                    ds.setURL(url + urlSuffix);
                    yield ds;
                }
                case MARIADB, MYSQL -> new MariaDbDataSource(url + urlSuffix);
                case SQLITE -> SqliteFixture.dataSource(SQLITE_FILE);
            };
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    HikariDataSource pool(int size) {
        return pool(size, "");
    }

    HikariDataSource pool(int size, String urlSuffix) {
        HikariConfig hc = new HikariConfig();
        hc.setDataSource(raw(urlSuffix));
        hc.setPoolName("tx-" + name);
        hc.setMaximumPoolSize(size);
        hc.setMinimumIdle(0);
        hc.setConnectionTimeout(5000);
        hc.setValidationTimeout(1000);
        hc.setAutoCommit(autoCommit);
        HikariDataSource pool = new HikariDataSource(hc);
        opened.add(pool);
        return pool;
    }

    JdbcLockClient client(DataSource pool) {
        JdbcLocks.Builder b = JdbcLocks.builder(pool).tableName(table()).createTableIfMissing();
        if (dialect == Dialect.MYSQL) {
            b.dialect(Dialect.MYSQL);
        }
        JdbcLockClient client = b.build();
        opened.add(0, client);
        return client;
    }

    /** Runs statements on a fresh connection, in auto-commit mode. */
    void exec(String... sql) {
        try (Connection c = raw("").getConnection(); Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("failed on " + name + ": " + String.join("; ", sql), e);
        }
    }

    /** A type for a text column that holds a few kilobytes, in this dialect. */
    String textType() {
        return dialect == Dialect.POSTGRESQL || dialect == Dialect.SQLITE ? "text" : "LONGTEXT";
    }

    static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    @Override
    public void close() {
        for (AutoCloseable c : opened) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        opened.clear();
    }

    @Override
    public String toString() {
        return name;
    }
}
