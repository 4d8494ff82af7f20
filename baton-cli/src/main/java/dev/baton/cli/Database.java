package dev.baton.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;
import org.sqlite.SQLiteOpenMode;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * An open connection source for the lock client, and how to close it.
 *
 * <p>Network databases get a small HikariCP pool named {@value #POOL_NAME}: at most {@value #MAX_POOL}
 * connections (the PostgreSQL client keeps one for {@code LISTEN}), {@link #CONNECT_TIMEOUT} to get one,
 * TCP keepalive and a {@link #SOCKET_TIMEOUT} socket timeout so a vanished server cannot hang a statement,
 * and a failing first connection fails at once instead of retrying. Parameters already in the URL win.
 * SQLite is used through the driver's own data source, in WAL mode (set once, {@link #toWal}) with a 10 s busy
 * timeout, so several processes on one host can share the file.
 *
 * @param dataSource  the connections
 * @param closer      closes the pool, if any
 * @param description the SQLite file, or the URL with any password hidden, for messages
 */
record Database(DataSource dataSource, AutoCloseable closer, String description) implements AutoCloseable {
    static final String POOL_NAME = "baton-cli";
    static final int MAX_POOL = 4;
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(10);
    static final Duration SQLITE_BUSY_TIMEOUT = Duration.ofSeconds(10);

    /** What a command does to the database. */
    enum Access {
        /** Writes, and may create the SQLite file and the lock table ({@code run}). */
        CREATE,
        /** Writes to an existing lock table ({@code release}, {@code purge}): a missing SQLite file is an error. */
        WRITE,
        /** Only reads ({@code list}, {@code status}): a read-only SQLite file is enough. */
        READ
    }

    /**
     * Opens the database behind a URL. Network databases are contacted once here.
     *
     * @throws BatonFailure (69) if the database cannot be reached or the default directory cannot be made,
     *                      (77) if it refused, (66) if a SQLite file that must exist does not
     */
    static Database open(DatabaseUrl url, Path home, Access access) {
        return switch (url.kind()) {
            case SQLITE -> sqlite(url, home, access);
            case POSTGRESQL, MARIADB -> pooled(url);
            case REDIS, ZOOKEEPER -> throw new IllegalStateException(url.shown() + " is not a SQL database");
        };
    }

    private static Database sqlite(DatabaseUrl url, Path home, Access access) {
        if (access != Access.CREATE) {
            // the driver would create a missing file, and a read-only open of one fails obscurely
            url.sqliteFile().filter(f -> !Files.exists(f)).ifPresent(f -> {
                throw new BatonFailure(ExitCodes.NO_TABLE, "no lock database: " + url.describe() + " does not"
                        + " exist ('baton run' creates it)", null);
            });
            SQLiteConfig config = new SQLiteConfig();
            config.setBusyTimeout((int) SQLITE_BUSY_TIMEOUT.toMillis());
            // no journal-mode pragma: it would write; a file in WAL mode stays in WAL mode
            config.setReadOnly(access == Access.READ);
            SQLiteDataSource ds = new SQLiteDataSource(config);
            ds.setUrl(url.jdbcUrl());
            if (access == Access.READ && url.sqliteFile().isPresent() && !opens(ds)) {
                // A file in WAL mode needs its -shm file, which a read-only directory cannot get: read it as
                // immutable instead. Nothing can write to it then, so the snapshot is the file's state.
                config.setOpenMode(SQLiteOpenMode.OPEN_URI);
                SQLiteDataSource immutable = new SQLiteDataSource(config);
                immutable.setUrl("jdbc:sqlite:file:" + url.sqliteFile().get() + "?immutable=1");
                return new Database(immutable, () -> { }, url.describe());
            }
            return new Database(ds, () -> { }, url.describe());
        }
        if (url.isDefaultSqlite(home)) {
            Path dir = DatabaseUrl.defaultSqliteFile(home).getParent();
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw new BatonFailure(ExitCodes.UNAVAILABLE, "cannot create " + dir + " for the embedded lock"
                        + " database: " + e, e);
            }
        }
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout((int) SQLITE_BUSY_TIMEOUT.toMillis());
        SQLiteDataSource ds = new SQLiteDataSource(config);
        ds.setUrl(url.jdbcUrl());
        try {
            toWal(ds);
        } catch (SQLException e) {
            throw DatabaseErrors.failure(url, e);
        }
        return new Database(ds, () -> { }, url.describe());
    }

    /**
     * Puts the file in WAL mode, once: the mode is the file's, and every later connection finds it. Switching a file
     * from a rollback journal reads it, then needs its write lock; while another connection holds that lock SQLite
     * reports {@code SQLITE_BUSY} at once, without the busy handler (a connection that has read must not wait for a
     * writer that may be waiting for it). So the switch is tried again after pauses of 1 ms doubling to 50 ms while
     * it fails busy, within the busy timeout. A file already in WAL mode answers at once.
     */
    static void toWal(SQLiteDataSource ds) throws SQLException {
        long deadline = System.nanoTime() + SQLITE_BUSY_TIMEOUT.toNanos();
        long pause = FIRST_WAL_PAUSE.toNanos();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            while (true) {
                try {
                    st.executeQuery("PRAGMA journal_mode = WAL").close();
                    return;
                } catch (SQLException e) {
                    // an interrupt (a signal while connecting) ends the wait: the caller reports the signal
                    if ((e.getErrorCode() & 0xff) != DatabaseErrors.SQLITE_BUSY || System.nanoTime() - deadline >= 0
                            || Thread.currentThread().isInterrupted()) {
                        throw e;
                    }
                }
                LockSupport.parkNanos(pause);
                pause = Math.min(LONGEST_WAL_PAUSE.toNanos(), pause * 2);
            }
        }
    }

    private static final Duration FIRST_WAL_PAUSE = Duration.ofMillis(1);
    private static final Duration LONGEST_WAL_PAUSE = Duration.ofMillis(50);

    /** Whether a connection opens (errors are left to the command, which reports them naming the file). */
    private static boolean opens(SQLiteDataSource ds) {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.executeQuery("SELECT count(*) FROM sqlite_master").close();
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    private static Database pooled(DatabaseUrl url) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(POOL_NAME);
        config.setJdbcUrl(url.jdbcUrl());
        config.setDriverClassName(url.kind().driver());
        config.setMaximumPoolSize(MAX_POOL);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(CONNECT_TIMEOUT.toMillis());
        config.setValidationTimeout(Math.min(3000, CONNECT_TIMEOUT.toMillis() - 1000));
        // One attempt at start-up: an unreachable database is reported at once (exit 69), not retried.
        config.setInitializationFailTimeout(1);
        if (url.kind() == DatabaseUrl.Kind.POSTGRESQL) {
            // pgjdbc takes these in seconds.
            setIfAbsent(config, url, "tcpKeepAlive", "true");
            setIfAbsent(config, url, "socketTimeout", Long.toString(SOCKET_TIMEOUT.toSeconds()));
            setIfAbsent(config, url, "connectTimeout", Long.toString(CONNECT_TIMEOUT.toSeconds()));
        } else {
            // MariaDB Connector/J takes these in milliseconds.
            setIfAbsent(config, url, "tcpKeepAlive", "true");
            setIfAbsent(config, url, "socketTimeout", Long.toString(SOCKET_TIMEOUT.toMillis()));
            setIfAbsent(config, url, "connectTimeout", Long.toString(CONNECT_TIMEOUT.toMillis()));
        }
        try {
            HikariDataSource pool = new HikariDataSource(config);
            return new Database(pool, pool, url.shown());
        } catch (HikariPool.PoolInitializationException e) {
            throw DatabaseErrors.failure(url, e.getCause() != null ? e.getCause() : e);
        } catch (RuntimeException e) {
            throw new BatonFailure(ExitCodes.UNAVAILABLE, "cannot open a connection pool for " + url.shown()
                    + ": " + url.scrub(BatonCommand.oneLine(e.getMessage())), e);
        }
    }

    private static void setIfAbsent(HikariConfig config, DatabaseUrl url, String name, String value) {
        String lower = url.jdbcUrl().toLowerCase(Locale.ROOT);
        String key = name.toLowerCase(Locale.ROOT) + "=";
        if (!lower.contains("?" + key) && !lower.contains("&" + key) && !lower.contains(";" + key)) {
            config.addDataSourceProperty(name, value);
        }
    }

    @Override
    public void close() {
        try {
            closer.close();
        } catch (Exception e) {
            // Closing a pool does not fail in a way the user can act on; the process is ending anyway.
        }
    }
}
