package dev.baton.jdbc.lease;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.jdbc.JdbcLocks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

import javax.sql.DataSource;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SQLite in its default rollback-journal mode ({@code journal_mode = DELETE}), where a {@code COMMIT} needs every
 * reader gone and can fail busy: clients in several threads and processes hand one lock round without wedging.
 */
class SqliteRollbackJournalIT {
    private static final String LOCK = "rollback-journal";
    /** Acquire and release rounds of each thread. */
    private static final int ROUNDS = 25;
    private Path file;

    @BeforeEach
    void newFile() throws Exception {
        Path dir = Path.of("target", "sqlite-rollback").toAbsolutePath();
        Files.createDirectories(dir);
        file = dir.resolve(UUID.randomUUID() + ".db");
    }

    static DataSource rollbackJournal(Path file) {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.DELETE);
        config.setBusyTimeout(10_000);
        SQLiteDataSource ds = new SQLiteDataSource(config);
        ds.setUrl("jdbc:sqlite:" + file);
        return ds;
    }

    /** A client over a HikariCP pool of 4 connections (a connection left in a transaction goes back to it). */
    static LockClient client(Path file, List<AutoCloseable> resources) {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setDataSource(rollbackJournal(file));
        config.setMaximumPoolSize(4);
        com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource(config);
        resources.add(pool);
        LockClient client = JdbcLocks.builder(pool).createTableIfMissing().leaseTime(Duration.ofSeconds(10)).build();
        resources.add(0, client);
        return client;
    }

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void closeResources() throws Exception {
        for (AutoCloseable r : resources) {
            r.close();
        }
        Files.deleteIfExists(file);
        Files.deleteIfExists(Path.of(file + "-journal"));
    }

    @Test
    void twoClientsOfTwoThreadsEachHandALockRoundInRollbackJournalModeWithoutAnError() throws Exception {
        LockClient a = client(file, resources);
        LockClient b = client(file, resources);
        {
            assertThat(journalMode()).isEqualTo("delete");
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger grants = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            for (LockClient client : List.of(a, a, b, b)) {
                threads.add(startThread(() -> {
                    try {
                        start.await();
                        rounds(client, ROUNDS, inside, grants);
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                }));
            }
            start.countDown();
            for (Thread t : threads) {
                t.join(TimeUnit.MINUTES.toMillis(2));
                assertThat(t.isAlive()).as("a thread still runs after 2 minutes").isFalse();
            }
            assertThat(errors).as("errors of the threads").isEmpty();
            assertThat(grants.get()).isEqualTo(4 * ROUNDS);
        }
    }

    @Test
    void aSecondProcessAndThisOneHandALockRoundInRollbackJournalModeWithoutAnError() throws Exception {
        LockClient here = client(file, resources);
        {
            String java = ProcessHandle.current().info().command().orElse("java");
            Process child = new ProcessBuilder(List.of(java, "-Xmx64m", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), SqliteRollbackJournalIT.class.getName(),
                    file.toString())).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                        StandardCharsets.UTF_8));
                assertThat(out.readLine()).as("the child's first line").isEqualTo("READY");
                ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
                AtomicInteger inside = new AtomicInteger();
                AtomicInteger grants = new AtomicInteger();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    threads.add(startThread(() -> {
                        try {
                            rounds(here, ROUNDS, inside, grants);
                        } catch (Throwable t) {
                            errors.add(t);
                        }
                    }));
                }
                for (Thread t : threads) {
                    t.join(TimeUnit.MINUTES.toMillis(2));
                    assertThat(t.isAlive()).as("a thread still runs after 2 minutes").isFalse();
                }
                String last = out.readLine();
                assertThat(child.waitFor(2, TimeUnit.MINUTES)).as("the child ended").isTrue();
                assertThat(errors).as("errors of this process's threads").isEmpty();
                assertThat(grants.get()).isEqualTo(2 * ROUNDS);
                assertThat(last).as("the child's report").isEqualTo("DONE " + 2 * ROUNDS + " grants, 0 errors");
                assertThat(child.exitValue()).isZero();
            } finally {
                child.destroyForcibly();
            }
        }
    }

    /**
     * {@code rounds} times: acquire (waiting up to 30 s), check nobody else in this process is inside, release.
     */
    private static void rounds(LockClient client, int rounds, AtomicInteger inside, AtomicInteger grants) {
        for (int i = 0; i < rounds; i++) {
            try (Lease lease = client.lock(LOCK).acquire(Duration.ofSeconds(30))) {
                assertThat(inside.incrementAndGet()).as("holders in this process").isEqualTo(1);
                grants.incrementAndGet();
                inside.decrementAndGet();
            }
        }
    }

    private static Thread startThread(Runnable body) {
        Thread t = new Thread(body, "rollback-journal-round");
        t.start();
        return t;
    }

    private String journalMode() throws Exception {
        try (Connection c = rollbackJournal(file).getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** Child: two threads of one client on the file {@code args[0]}; prints READY, then DONE with its counts. */
    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicInteger grants = new AtomicInteger();
        AtomicInteger inside = new AtomicInteger();
        List<AutoCloseable> resources = new ArrayList<>();
        LockClient client = client(file, resources);
        try {
            System.out.println("READY");
            System.out.flush();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                threads.add(startThread(() -> {
                    try {
                        rounds(client, ROUNDS, inside, grants);
                    } catch (Throwable t) {
                        errors.add(t);
                        t.printStackTrace();
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
        } finally {
            for (AutoCloseable r : resources) {
                r.close();
            }
        }
        System.out.println("DONE " + grants.get() + " grants, " + errors.size() + " errors");
        System.out.flush();
        System.exit(errors.isEmpty() ? 0 : 1);
    }
}
