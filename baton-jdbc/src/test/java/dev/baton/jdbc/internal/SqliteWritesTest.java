package dev.baton.jdbc.internal;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link SqliteWrites} on a real SQLite file: the write lock, the user's busy_timeout bound, commit and rollback. */
class SqliteWritesTest {
    private SQLiteDataSource dataSource;

    @BeforeEach
    void freshDatabase() throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "sqlite-writes"));
        Path file = Files.createTempFile(dir, "writes", ".db");
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setBusyTimeout(300);
        dataSource = new SQLiteDataSource(config);
        dataSource.setUrl("jdbc:sqlite:" + file);
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (v INTEGER)");
        }
    }

    @Test
    void theWorkIsCommittedAndTheBusyTimeoutPutBack() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            int inserted = SqliteWrites.inWriteTransaction(c, tx -> {
                try (Statement st = tx.createStatement()) {
                    return st.executeUpdate("INSERT INTO t VALUES (1)");
                }
            });
            assertThat(inserted).isEqualTo(1);
            assertThat(busyTimeout(c)).isEqualTo(300);
        }
        assertThat(count()).isEqualTo(1);
    }

    /**
     * A write whose loss is harmless (a release, a ticket) commits without the WAL's fsync in WAL mode
     * ({@code synchronous} NORMAL, 1, during it) and the connection's setting is put back (FULL, 2); in a rollback
     * journal it stays FULL, where NORMAL could corrupt the file in a power failure.
     */
    @Test
    void aWriteNotFlushedCommitsAtNormalInWalModeOnlyAndPutsTheSettingBack() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            try (Statement st = c.createStatement()) {
                st.execute("PRAGMA synchronous = FULL");
            }
            int during = SqliteWrites.inWriteTransactionNotFlushed(c, tx -> {
                try (Statement in = tx.createStatement()) {
                    in.executeUpdate("INSERT INTO t VALUES (1)");
                }
                return synchronous(tx);
            });
            assertThat(during).as("synchronous during the write, WAL mode").isEqualTo(1);
            assertThat(synchronous(c)).as("put back").isEqualTo(2);
            try (Statement st = c.createStatement()) {
                st.execute("PRAGMA journal_mode = DELETE"); // (a statement still open would keep SQLite from committing)
            }
            int inJournal = SqliteWrites.inWriteTransactionNotFlushed(c, tx -> synchronous(tx));
            assertThat(inJournal).as("synchronous during the write, rollback journal").isEqualTo(2);
        }
        assertThat(count()).isEqualTo(1);
    }

    private static int synchronous(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA synchronous")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void aFailingWorkIsRolledBackAndRethrown() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            assertThatThrownBy(() -> SqliteWrites.inWriteTransaction(c, tx -> {
                try (Statement st = tx.createStatement()) {
                    st.executeUpdate("INSERT INTO t VALUES (1)");
                    st.executeUpdate("INSERT INTO no_such_table VALUES (1)");
                }
                return null;
            })).isInstanceOf(SQLException.class).hasMessageContaining("no_such_table");
            assertThat(busyTimeout(c)).isEqualTo(300);
            // the connection is usable and out of the transaction
            SqliteWrites.inWriteTransaction(c, tx -> null);
        }
        assertThat(count()).isZero();
    }

    @Test
    void aWriteLockHeldLongerThanTheBusyTimeoutIsSqliteBusyAfterThatTimeNotSooner() throws Exception {
        try (Connection blocker = dataSource.getConnection(); Statement hold = blocker.createStatement();
             Connection c = dataSource.getConnection()) {
            hold.execute("BEGIN IMMEDIATE");
            long start = System.nanoTime();
            assertThatThrownBy(() -> SqliteWrites.inWriteTransaction(c, tx -> null))
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(SqliteWrites.isBusy((SQLException) e)).isTrue());
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
            assertThat(busyTimeout(c)).isEqualTo(300);
            hold.execute("ROLLBACK");
        }
    }

    @Test
    void aWriterWaitingForTheLockGetsItOnceItIsFreedAndKeepsItsInterruptFlag() throws Exception {
        try (Connection blocker = dataSource.getConnection(); Statement hold = blocker.createStatement();
             Connection c = dataSource.getConnection()) {
            try (Statement st = c.createStatement()) {
                st.execute("PRAGMA busy_timeout = 10000"); // longer than any pause of a loaded machine
            }
            hold.execute("BEGIN IMMEDIATE");
            CountDownLatch trying = new CountDownLatch(1);
            CompletableFuture<Boolean> writer = CompletableFuture.supplyAsync(() -> {
                Thread.currentThread().interrupt();
                trying.countDown();
                try {
                    SqliteWrites.inWriteTransaction(c, tx -> {
                        try (Statement st = tx.createStatement()) {
                            return st.executeUpdate("INSERT INTO t VALUES (2)");
                        }
                    });
                    return Thread.interrupted();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            trying.await();
            Thread.sleep(50);
            assertThat(writer).isNotDone();
            hold.execute("ROLLBACK");
            assertThat(writer.get(10, TimeUnit.SECONDS)).as("interrupt flag kept").isTrue();
        }
        assertThat(count()).isEqualTo(1);
    }

    private static long busyTimeout(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA busy_timeout")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private long count() throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
