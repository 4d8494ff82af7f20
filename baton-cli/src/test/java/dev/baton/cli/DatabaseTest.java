package dev.baton.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

import java.nio.file.Path;
import java.time.Duration;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class DatabaseTest {
    @TempDir
    Path dir;

    /**
     * Switching a file in a rollback journal to WAL reads the file, then needs its write lock: SQLite reports
     * SQLITE_BUSY at once, without the busy handler, while another connection holds that lock (here a plain
     * application's {@code BEGIN IMMEDIATE}; two {@code baton run}s switching a new file at once do the same). The
     * other connection lets go only once the opening thread waits for it, so the open must wait, not fail.
     */
    @Test
    void openingAFileInARollbackJournalWaitsForAWriterInsteadOfFailingBusy() throws Exception {
        Path file = dir.resolve("locks.db");
        SQLiteDataSource plain = new SQLiteDataSource();
        plain.setUrl("jdbc:sqlite:" + file);
        try (Connection writer = plain.getConnection(); Statement w = writer.createStatement()) {
            w.execute("CREATE TABLE app (x INTEGER)"); // a rollback journal: nothing set WAL
            w.execute("BEGIN IMMEDIATE");
            AtomicReference<Thread> opener = new AtomicReference<>();
            CompletableFuture<String> opened = CompletableFuture.supplyAsync(() -> {
                opener.set(Thread.currentThread());
                DatabaseUrl url = DatabaseUrl.parse("jdbc:sqlite:" + file, "--url", dir);
                try (Database db = Database.open(url, dir, Database.Access.CREATE);
                     Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                     ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
                    rs.next();
                    return rs.getString(1);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // the writer commits once the opener waits (parked between tries), or the open has ended
            await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(1)).until(() -> opened.isDone()
                    || opener.get() != null && opener.get().getState() == Thread.State.TIMED_WAITING);
            w.execute("COMMIT");
            assertThat(opened.get(1, TimeUnit.MINUTES)).isEqualTo("wal");
        }
    }

    /** SQLite reports some conflicts at once, so a busy file is reported as busy, not as locked for the timeout. */
    @Test
    void aBusySqliteFileIsExit69WithoutClaimingAWaitThatMayNotHaveHappened() {
        Path file = dir.resolve("locks.db");
        DatabaseUrl url = DatabaseUrl.parse("jdbc:sqlite:" + file, "--url", dir);
        BatonFailure f = DatabaseErrors.failure(url,
                new SQLException("[SQLITE_BUSY] The database file is locked (database is locked)", null, 5));
        assertThat(f.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(f.getMessage()).isEqualTo("SQLite file " + file + " is locked by another process: SQLite reported"
                + " it busy (Baton waits up to 10s for its lock): [SQLITE_BUSY] The database file is locked (database"
                + " is locked)").doesNotContain("stayed");
    }
}
