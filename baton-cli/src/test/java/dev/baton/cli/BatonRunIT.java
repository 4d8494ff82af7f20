package dev.baton.cli;

import dev.baton.Lease;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sqlite.SQLiteDataSource;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Spawns real {@code baton run} processes (the test classpath, not the shaded jar) against SQLite, and
 * against the PostgreSQL and MariaDB servers that {@code scripts/start-servers.sh} starts.
 */
class BatonRunIT {
    static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test?user=root";
    static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    /** A spawned {@code baton} with its output in files (a killed command's orphans may keep pipes open). */
    record Baton(Process process, Path outFile, Path errFile) {
        int awaitExit(Duration timeout) throws InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                fail("baton did not exit within " + timeout.toSeconds() + " s; stderr: " + err());
            }
            return process.exitValue();
        }

        String out() {
            return read(outFile);
        }

        String err() {
            return read(errFile);
        }

        List<String> errLines() {
            return err().lines().toList();
        }

        private static String read(Path p) {
            try {
                return Files.readString(p);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private Baton start(String... args) throws IOException {
        String id = UUID.randomUUID().toString();
        Path out = dir.resolve("baton-" + id + ".out");
        Path err = dir.resolve("baton-" + id + ".err");
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", System.getProperty("java.class.path"),
                BatonCommand.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().remove("BATON_URL");
        return new Baton(pb.start(), out, err);
    }

    private static String uniqueLock(String what) {
        return "cli-it-" + what + "-" + UUID.randomUUID();
    }

    private String sqliteUrl() {
        return "jdbc:sqlite:" + dir.resolve("locks.db");
    }

    private static void requireServer(String name, int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        } catch (IOException e) {
            fail(name + " is not reachable at 127.0.0.1:" + port + " (" + e.getMessage() + "); start it with"
                    + " scripts/start-servers.sh");
        }
    }

    // ---- a) mutual exclusion across processes ----

    @Test
    void fourProcessesNeverOverlapOnSqlite() throws Exception {
        assertExclusion(sqliteUrl());
    }

    @Test
    void fourProcessesNeverOverlapOnPostgres() throws Exception {
        requireServer("PostgreSQL", 5432);
        assertExclusion(PG);
    }

    @Test
    void fourProcessesNeverOverlapOnMariadb() throws Exception {
        requireServer("MariaDB", 3306);
        assertExclusion(MARIADB);
    }

    /** One critical section as the command logged it. */
    record Interval(long start, long end, long token) {
    }

    @Test
    void fourProcessesNeverOverlapWithTheSessionStrategyOnPostgresAndMariadb() throws Exception {
        requireServer("PostgreSQL", 5432);
        requireServer("MariaDB", 3306);
        assertExclusion(PG, "--strategy", "session");
        assertExclusion(MARIADB, "--strategy", "session");
    }

    @Test
    void listShowsASessionLockWhileItIsHeld() throws Exception {
        requireServer("PostgreSQL", 5432);
        String lock = uniqueLock("list-session");
        Path started = dir.resolve("started-" + UUID.randomUUID());
        Baton holder = start("run", "--strategy", "session", "--lock", lock, "--url", PG, "--", "sh", "-c",
                "touch '" + started + "'; sleep 30");
        for (int i = 0; i < 300 && !Files.exists(started); i++) {
            Thread.sleep(50);
        }
        assertThat(started).as("command started under the lock; stderr: %s", holder.err()).exists();
        Baton list = start("list", "--url", PG);
        assertThat(list.awaitExit(EXIT_TIMEOUT)).as("list; stderr: %s", list.err()).isZero();
        assertThat(list.out().lines().filter(l -> l.endsWith(" " + lock)))
                .as("a row for the session lock in:%n%s", list.out()).singleElement().asString()
                .contains("(pid ").contains("session");
        Baton second = start("run", "--strategy", "session", "--wait", "0", "--lock", lock, "--url", PG, "--", "true");
        assertThat(second.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", second.err()).isEqualTo(75);
        holder.process().destroy();
        holder.awaitExit(EXIT_TIMEOUT);
    }

    private void assertExclusion(String url, String... extra) throws Exception {
        String lock = uniqueLock("exclusion");
        Path log = dir.resolve("sections-" + UUID.randomUUID() + ".log");
        String script = "echo \"start $(date +%s%N) $BATON_FENCING_TOKEN\" >> '" + log + "'; sleep 0.2;"
                + " echo \"end $(date +%s%N) $BATON_FENCING_TOKEN\" >> '" + log + "'";
        List<Baton> batons = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            List<String> args = new ArrayList<>(List.of("run", "--lock", lock, "--url", url, "--wait", "60s"));
            args.addAll(List.of(extra));
            args.addAll(List.of("--", "sh", "-c", script));
            batons.add(start(args.toArray(String[]::new)));
        }
        for (Baton b : batons) {
            assertThat(b.awaitExit(Duration.ofSeconds(60))).as("exit status; stderr: %s", b.err()).isZero();
        }

        Map<Long, long[]> byToken = new HashMap<>();
        for (String line : Files.readAllLines(log)) {
            String[] f = line.split(" ");
            assertThat(f).as("log line '%s'", line).hasSize(3);
            long[] times = byToken.computeIfAbsent(Long.parseLong(f[2]), t -> new long[] {-1, -1});
            times[f[0].equals("start") ? 0 : 1] = Long.parseLong(f[1]);
        }
        assertThat(byToken).as("one token per process").hasSize(4);
        List<Interval> sections = byToken.entrySet().stream()
                .map(e -> new Interval(e.getValue()[0], e.getValue()[1], e.getKey()))
                .sorted(Comparator.comparingLong(Interval::start))
                .toList();
        for (Interval s : sections) {
            assertThat(s.start()).as("start of token %d", s.token()).isPositive();
            assertThat(s.end()).as("end of token %d", s.token()).isGreaterThan(s.start());
        }
        for (int i = 1; i < sections.size(); i++) {
            Interval before = sections.get(i - 1);
            Interval after = sections.get(i);
            assertThat(after.start()).as("section with token %d starts after the one with token %d ends",
                    after.token(), before.token()).isGreaterThan(before.end());
            assertThat(after.token()).as("tokens increase in section order").isGreaterThan(before.token());
        }
    }

    // ---- b) not acquired, exit status, environment ----

    @Test
    void notAcquiredWithinWaitExits75NamingTheHolder() throws Exception {
        String lock = uniqueLock("busy");
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        try (JdbcLockClient locks = JdbcLocks.builder(ds).createTableIfMissing().build();
             Lease held = locks.lock(lock).tryAcquire().orElseThrow()) {
            Baton b = start("run", "--wait", "0", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                    "echo ran");
            assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            assertThat(b.errLines()).hasSize(1);
            assertThat(b.err()).startsWith("baton: ").contains(lock).contains("0 ms")
                    .contains(held.holderId()).contains("token " + held.fencingToken());
            assertThat(b.out()).isEmpty();
        }
    }

    @Test
    void passesTheCommandsStatusAndTheLockEnvironment() throws Exception {
        String lock = uniqueLock("env");
        Baton b = start("run", "--wait", "0", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "echo \"$BATON_LOCK|$BATON_FENCING_TOKEN\"; exit 3");
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(3);
        assertThat(b.out().strip()).matches(java.util.regex.Pattern.quote(lock) + "\\|[1-9][0-9]*");
        assertThat(b.err()).isEmpty();

        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        try (JdbcLockClient locks = JdbcLocks.builder(ds).build()) {
            assertThat(locks.lock(lock).tryAcquire()).as("released after the command").isPresent()
                    .get().satisfies(Lease::close);
        }
    }

    // ---- c) lease lost ----

    @Test
    void lostLeaseStopsTheCommandAndExits76() throws Exception {
        requireServer("PostgreSQL", 5432);
        String lock = uniqueLock("lost");
        Baton b = start("run", "--lease", "300ms", "--lock", lock, "--url", PG, "--", "sleep", "30");
        try (Connection c = DriverManager.getConnection(PG)) {
            awaitHeld(c, lock, b);
            try (PreparedStatement ps = c.prepareStatement("UPDATE baton_locks SET owner = 'intruder',"
                    + " token = token + 1000000, expires_at = now() + interval '1 minute' WHERE name = ?")) {
                ps.setString(1, lock);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            long t0 = System.nanoTime();
            assertThat(b.awaitExit(Duration.ofSeconds(10))).as("stderr: %s", b.err()).isEqualTo(ExitCodes.LEASE_LOST);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
            assertThat(b.errLines()).hasSize(1);
            assertThat(b.err()).startsWith("baton: ").contains("lease").contains("lost").contains(lock);
        }
    }

    @Test
    void lostLeaseKillsACommandThatIgnoresSigtermAfterTheGrace() throws Exception {
        String lock = uniqueLock("lost-grace");
        Baton b = start("run", "--lease", "300ms", "--grace", "500ms", "--lock", lock, "--url", sqliteUrl(), "--",
                "sh", "-c", "trap '' TERM; sleep 30");
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        try (Connection c = ds.getConnection()) {
            // SQLite times are epoch milliseconds by SQLite's clock.
            int taken = 0;
            while (taken == 0 && System.nanoTime() < deadline && b.process().isAlive()) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE baton_locks SET owner = 'intruder',"
                        + " token = token + 1000000, expires_at = expires_at + 60000 WHERE name = ?"
                        + " AND owner IS NOT NULL")) {
                    ps.setString(1, lock);
                    taken = ps.executeUpdate();
                } catch (SQLException e) {
                    // no table yet, or the database is busy: try again
                }
                Thread.sleep(50);
            }
            assertThat(taken).as("took the row over; stderr: %s", b.err()).isEqualTo(1);
        }
        long t0 = System.nanoTime();
        assertThat(b.awaitExit(Duration.ofSeconds(10))).as("stderr: %s", b.err()).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
        assertThat(b.err()).contains("lost").contains("SIGKILL after 500ms");
    }

    private static void awaitHeld(Connection c, String lock, Baton b) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM baton_locks WHERE name = ?"
                    + " AND owner IS NOT NULL AND expires_at > now()")) {
                ps.setString(1, lock);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return;
                    }
                }
            } catch (SQLException e) {
                // The table may not exist until baton creates it.
                if (!"42P01".equals(e.getSQLState())) {
                    throw e;
                }
            }
            if (!b.process().isAlive()) {
                fail("baton exited with " + b.process().exitValue() + " before holding '" + lock + "': " + b.err());
            }
            Thread.sleep(50);
        }
        fail("baton did not acquire '" + lock + "' within 20 s; stderr: " + b.err());
    }

    // ---- d) usage and unavailable ----

    @Test
    void badArgumentsExit64AndUnreachableDatabaseExits69WithoutStackTraces() throws Exception {
        Map<List<String>, Integer> cases = Map.of(
                List.of("run", "--wait", "5x", "--lock", "x", "--url", sqliteUrl(), "--", "true"), ExitCodes.USAGE,
                List.of("run", "--lock", "", "--url", sqliteUrl(), "--", "true"), ExitCodes.USAGE,
                List.of("run", "--lock", "x", "--url", sqliteUrl()), ExitCodes.USAGE,
                List.of("run", "--lock", "x", "--url", "jdbc:postgresql://127.0.0.1:1/test", "--", "true"),
                ExitCodes.UNAVAILABLE);
        Map<List<String>, Baton> started = new HashMap<>();
        for (List<String> args : cases.keySet()) {
            started.put(args, start(args.toArray(String[]::new)));
        }
        for (var e : started.entrySet()) {
            Baton b = e.getValue();
            assertThat(b.awaitExit(EXIT_TIMEOUT)).as("status of %s; stderr: %s", e.getKey(), b.err())
                    .isEqualTo(cases.get(e.getKey()));
            assertThat(b.errLines()).as("stderr of %s", e.getKey()).hasSize(1);
            assertThat(b.err()).startsWith("baton: ").doesNotContain("\tat ").doesNotContain("Exception");
            assertThat(b.out()).isEmpty();
        }
    }

    // ---- e) signals ----

    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT"})
    void signalIsForwardedAndTheLockReleased(String signal) throws Exception {
        String lock = uniqueLock("sig" + signal);
        Path ready = dir.resolve("ready-" + signal);
        Baton b = start("run", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "trap 'kill $!; exit 42' " + signal + "; sleep 30 & touch '" + ready + "'; wait");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(ready)) {
            if (!b.process().isAlive() || System.nanoTime() > deadline) {
                fail("the command did not start; stderr: " + b.err());
            }
            Thread.sleep(20);
        }

        signal(b.process(), signal);
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(42);
        assertThat(b.err()).isEmpty();

        Baton after = start("run", "--wait", "0", "--lock", lock, "--url", sqliteUrl(), "--", "true");
        assertThat(after.awaitExit(EXIT_TIMEOUT)).as("lock free afterwards; stderr: %s", after.err()).isZero();
    }

    @Test
    void sigtermWhileWaitingExits143WithoutRunningTheCommand() throws Exception {
        String lock = uniqueLock("sigwait");
        Path ran = dir.resolve("ran");
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        try (JdbcLockClient locks = JdbcLocks.builder(ds).createTableIfMissing().build();
             Lease held = locks.lock(lock).tryAcquire().orElseThrow()) {
            Baton b = start("run", "--lock", lock, "--url", sqliteUrl(), "--", "touch", ran.toString());
            awaitOpenFile(b.process(), dir.resolve("locks.db"));
            Thread.sleep(300); // past opening the file, into the wait

            signal(b.process(), "TERM");
            assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(128 + 15);
            assertThat(b.err()).startsWith("baton: SIGTERM while waiting for lock '" + lock + "'");
            assertThat(b.errLines()).hasSize(1);
            assertThat(ran).doesNotExist();
            assertThat(held.isValid()).isTrue();
        }
    }

    /** Waits until the process has the file open (Linux /proc): by then baton has its handlers and client. */
    private static void awaitOpenFile(Process p, Path file) throws Exception {
        Path fds = Path.of("/proc", Long.toString(p.pid()), "fd");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline && p.isAlive()) {
            try (var list = Files.list(fds)) {
                if (list.anyMatch(fd -> {
                    try {
                        return Files.readSymbolicLink(fd).equals(file.toRealPath());
                    } catch (IOException e) {
                        return false;
                    }
                })) {
                    return;
                }
            } catch (IOException e) {
                // the process is starting or gone; check again
            }
            Thread.sleep(20);
        }
        fail("process " + p.pid() + " never opened " + file);
    }

    private static void signal(Process p, String signal) throws Exception {
        if (signal.equals("TERM")) {
            p.destroy();
            return;
        }
        Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(p.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }
}
