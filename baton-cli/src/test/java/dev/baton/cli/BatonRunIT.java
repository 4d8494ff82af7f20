package dev.baton.cli;

import dev.baton.Lease;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.redis.RedisLockClient;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.TestServers;
import io.lettuce.core.RedisURI;
import dev.baton.faultproxy.FaultProxy;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.awaitility.core.ConditionTimeoutException;
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
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
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
    /** A launcher call that may build nothing but may run the start-up training first (see bin/baton). */
    static final Duration LAUNCHER_FIRST_CALL_TIMEOUT = Duration.ofSeconds(180);

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

    /**
     * Starts {@code baton} on the test classpath with the launcher's JVM flags. Every signal starts with its
     * default disposition ({@code env --default-signal}): a build started from a shell context that ignores
     * SIGINT (a background job) passes that on to every child, and a baton and command that ignore SIGINT
     * would make the signal tests meaningless (issue 8).
     */
    private Baton start(String... args) throws IOException {
        return start(List.of(), args);
    }

    /** As {@link #start(String...)}, with {@code wrapper} (such as a new process group) before the JVM. */
    private Baton start(List<String> wrapper, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("env", "--default-signal"));
        cmd.addAll(wrapper);
        cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+UnlockDiagnosticVMOptions", "-XX:-DisplayVMOutput",
                "-cp", System.getProperty("java.class.path"), BatonCommand.class.getName()));
        cmd.addAll(List.of(args));
        return spawn(cmd);
    }

    private Baton spawn(List<String> cmd) throws IOException {
        String id = UUID.randomUUID().toString();
        Path out = dir.resolve("baton-" + id + ".out");
        Path err = dir.resolve("baton-" + id + ".err");
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
        awaitFile(started, holder);
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
            assertThat(b.errLines()).as("stderr: %s", b.err()).hasSize(1);
            assertThat(b.err()).startsWith("baton: ").contains("lease").contains("lost").contains(lock);
        }
    }

    @Test
    void lostLeaseKillsACommandThatIgnoresSigtermAfterTheGrace() throws Exception {
        String lock = uniqueLock("lost-grace");
        Baton b = start("run", "--lease", "300ms", "--grace", "500ms", "--lock", lock, "--url", sqliteUrl(), "--",
                "sh", "-c", "trap '' TERM; sleep 30");
        takeOverSqlite(lock, b);
        long t0 = System.nanoTime();
        assertThat(b.awaitExit(Duration.ofSeconds(10))).as("stderr: %s", b.err()).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
        assertThat(b.err()).contains("lost").contains("SIGKILL after 500ms");
    }

    private static void awaitHeld(Connection c, String lock, Baton b) {
        awaitWhileRunning(b, "baton holds '" + lock + "'", () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM baton_locks WHERE name = ?"
                    + " AND owner IS NOT NULL AND expires_at > now()")) {
                ps.setString(1, lock);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return true;
                    }
                }
            } catch (SQLException e) {
                // The table may not exist until baton creates it.
                if (!"42P01".equals(e.getSQLState())) {
                    throw e;
                }
            }
            return false;
        });
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

    /**
     * One name, one lock: a name used with one strategy is refused by the other, in either order. That is a
     * usage error (64) that names the strategy in the CLI's words, not "database unreachable" (69, as before);
     * and {@code baton release} of a name the session strategy claimed releases nothing (1), saying why.
     */
    @Test
    void aNameUsedWithTheOtherStrategyExits64NamingItOnPostgres() throws Exception {
        requireServer("PostgreSQL", 5432);
        String sessionFirst = uniqueLock("session-first");
        String leaseFirst = uniqueLock("lease-first");
        try {
            Baton claim = start("run", "--strategy", "session", "--lock", sessionFirst, "--url", PG, "--", "true");
            assertThat(claim.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", claim.err()).isZero();
            Baton lease = start("run", "--lock", leaseFirst, "--url", PG, "--", "true");
            assertThat(lease.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", lease.err()).isZero();

            Baton asLease = start("run", "--lock", sessionFirst, "--url", PG, "--", "true");
            Baton asSession = start("run", "--strategy", "session", "--lock", leaseFirst, "--url", PG, "--", "true");
            Baton release = start("release", sessionFirst, "--url", PG);
            for (var c : List.of(Map.entry(asLease, "session"), Map.entry(asSession, "lease"))) {
                Baton b = c.getKey();
                assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(ExitCodes.USAGE);
                assertThat(b.errLines()).hasSize(1);
                assertThat(b.err()).startsWith("baton: lock 'cli-it-")
                        .contains("is used with --strategy " + c.getValue() + " in table baton_locks")
                        .contains("run it with --strategy " + c.getValue())
                        .doesNotContain("Exception").doesNotContain("Strategy.").doesNotContain("purgeExpired");
                assertThat(b.out()).isEmpty();
            }
            assertThat(release.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", release.err()).isEqualTo(ExitCodes.NOT_HELD);
            assertThat(release.err()).startsWith("baton: lock '" + sessionFirst + "' is used with --strategy session")
                    .contains("nothing released").doesNotContain("Exception");
        } finally {
            try (Connection c = DriverManager.getConnection(PG);
                 PreparedStatement ps = c.prepareStatement("DELETE FROM baton_locks WHERE name IN (?, ?)")) {
                ps.setString(1, sessionFirst);
                ps.setString(2, leaseFirst);
                ps.executeUpdate();
            }
        }
    }

    // ---- e) signals ----

    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT", "HUP"})
    void signalIsForwardedAndTheLockReleased(String signal) throws Exception {
        String lock = uniqueLock("sig" + signal);
        Path ready = dir.resolve("ready-" + signal);
        Baton b = start("run", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                // the signal reaches the whole group: the background sleep may be gone before the trap runs
                "trap 'kill $! 2>/dev/null; exit 42' " + signal + "; sleep 30 & touch '" + ready + "'; wait");
        awaitFile(ready, b);

        signal(b.process(), signal);
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(42);
        assertThat(b.err()).isEmpty();

        Baton after = start("run", "--wait", "0", "--lock", lock, "--url", sqliteUrl(), "--", "true");
        assertThat(after.awaitExit(EXIT_TIMEOUT)).as("lock free afterwards; stderr: %s", after.err()).isZero();
    }

    /**
     * A stop request is honoured: a command that ignores the signal passed on to it gets SIGKILL (the whole
     * group) once {@code --grace} has passed, the lock is released, and baton exits 128 + the signal's number.
     */
    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT", "HUP"})
    void aStopRequestKillsACommandThatIgnoresItAfterTheGraceAndReleasesTheLock(String signal) throws Exception {
        String lock = uniqueLock("stop-" + signal);
        Path pid = dir.resolve("pid-" + UUID.randomUUID());
        Baton b = start("run", "--grace", "3s", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "trap '' " + signal + "; echo $$ > '" + pid + ".tmp'; mv '" + pid + ".tmp' '" + pid + "'; sleep 60");
        awaitFile(pid, b);
        long group = readPids(pid).get(0);
        awaitAtMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(groupMembers(group)).as("the command and its sleep").hasSizeGreaterThanOrEqualTo(2));

        long t0 = System.nanoTime();
        kill(signal, b.process().pid());
        int status = b.awaitExit(EXIT_TIMEOUT);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(status).as("exit status after SIG%s; stderr: %s", signal, b.err())
                .isEqualTo(128 + signalNumber(signal));
        assertThat(took).as("from SIG%s to baton's exit (--grace 3s)", signal)
                .isGreaterThanOrEqualTo(Duration.ofMillis(2900)).isLessThan(Duration.ofSeconds(10));
        assertThat(groupMembers(group)).as("the command's process group when baton exited").isEmpty();
        assertThat(b.errLines()).as("stderr").singleElement().asString().startsWith("baton: SIG" + signal)
                .contains("SIGKILL").contains("3s");
        assertLockFree(lock);
    }

    private static int signalNumber(String name) {
        return switch (name) {
            case "HUP" -> 1;
            case "INT" -> 2;
            case "TERM" -> 15;
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** The live (not zombie) processes whose process group is {@code pgid}, from /proc. */
    private static List<Long> groupMembers(long pgid) throws IOException {
        List<Long> members = new ArrayList<>();
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                String stat;
                try {
                    stat = Files.readString(p.resolve("stat"));
                } catch (IOException e) {
                    continue; // ended meanwhile
                }
                String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                // after the name: state, ppid, pgrp
                if (!after[0].equals("Z") && Long.parseLong(after[2]) == pgid) {
                    members.add(Long.parseLong(name));
                }
            }
        }
        return members;
    }

    @Test
    void sigtermWhileWaitingExits143WithoutRunningTheCommand() throws Exception {
        String lock = uniqueLock("sigwait");
        Path ran = dir.resolve("ran");
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        try (JdbcLockClient locks = JdbcLocks.builder(ds).createTableIfMissing().build();
             Lease held = locks.lock(lock).tryAcquire().orElseThrow()) {
            Baton b = start("run", "--quiet", "--lock", lock, "--url", sqliteUrl(), "--", "touch", ran.toString());
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
    private static void awaitOpenFile(Process p, Path file) {
        Path fds = Path.of("/proc", Long.toString(p.pid()), "fd");
        awaitAtMost(Duration.ofSeconds(20)).alias("process " + p.pid() + " opens " + file).until(() -> {
            if (!p.isAlive()) {
                fail("process " + p.pid() + " exited with " + p.exitValue() + " before it opened " + file);
            }
            try (var list = Files.list(fds)) {
                return list.anyMatch(fd -> {
                    try {
                        return Files.readSymbolicLink(fd).equals(file.toRealPath());
                    } catch (IOException e) {
                        return false;
                    }
                });
            } catch (IOException e) {
                return false; // the process is starting or gone; check again
            }
        });
    }

    private static void signal(Process p, String signal) throws Exception {
        if (signal.equals("TERM")) {
            p.destroy();
            return;
        }
        Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(p.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }

    // ---- f) while the command (or anything it started) runs, it holds the lock; when the lock is gone, the
    //      command is gone (issue 9) ----

    @Test
    void aFrozenBatonWhoseLeaseWasTakenOverExits76OnSqlite() throws Exception {
        assertFrozenBatonExits76(sqliteUrl());
    }

    @Test
    void aFrozenBatonWhoseLeaseWasTakenOverExits76OnPostgres() throws Exception {
        requireServer("PostgreSQL", 5432);
        assertFrozenBatonExits76(PG);
    }

    @Test
    void aFrozenBatonWhoseLeaseWasTakenOverExits76OnMariadb() throws Exception {
        requireServer("MariaDB", 3306);
        assertFrozenBatonExits76(MARIADB);
    }

    /**
     * The exit status after the command asks the server ({@code Lease.checkValid()}), not the renewal: a grant
     * force-released while the command ran, before the next renewal could notice (lease 30 s, renewed every
     * 10 s), is reported lost (76) when the command ends. (Whether the renewal notices first or the check
     * after the command, the status is 76; without either it would be the command's 0.)
     */
    @Test
    void aGrantForceReleasedWhileTheCommandRanExits76WhenItEnds() throws Exception {
        String lock = uniqueLock("forced");
        Path started = dir.resolve("started-" + UUID.randomUUID());
        Path go = dir.resolve("go-" + UUID.randomUUID());
        Baton b = start("run", "--lease", "30s", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "touch '" + started + "'; while [ ! -e '" + go + "' ]; do sleep 0.05; done");
        awaitFile(started, b);
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        try (JdbcLockClient locks = JdbcLocks.builder(ds).build()) {
            assertThat(locks.forceRelease(lock, java.util.OptionalLong.empty())).as("force-released").isPresent();
        }
        Files.createFile(go);
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(b.errLines()).as("only baton's own lines").isNotEmpty().allMatch(l -> l.startsWith("baton: "));
        assertThat(b.err()).contains("lost").contains(lock);
    }

    /**
     * SIGSTOP the baton JVM (a long GC pause, a stalled container) while its command runs with a 1 s lease;
     * a second baton takes the lock and runs; the first command ends; on SIGCONT the first baton must say the
     * lease was lost (76), whatever its watchdog has or has not noticed yet.
     */
    private void assertFrozenBatonExits76(String url) throws Exception {
        String lock = uniqueLock("frozen");
        Path started = dir.resolve("started-" + UUID.randomUUID());
        Path done = dir.resolve("done-" + UUID.randomUUID());
        Baton first = start("run", "--lease", "1s", "--lock", lock, "--url", url, "--", "sh", "-c",
                "touch '" + started + "'; sleep 3; touch '" + done + "'");
        awaitFile(started, first);
        long pid = first.process().pid();
        freezeOutsideATransaction(pid, url, lock);
        try {
            Baton second = start("run", "--quiet", "--wait", "20s", "--lock", lock, "--url", url, "--", "true");
            assertThat(second.awaitExit(EXIT_TIMEOUT)).as("the second baton took the lock while the first was"
                    + " frozen; stderr: %s", second.err()).isZero();
            awaitFile(done, null);
        } finally {
            kill("CONT", pid);
        }
        assertThat(first.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", first.err()).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(first.errLines()).as("only baton's own lines, no log lines").isNotEmpty()
                .allMatch(l -> l.startsWith("baton: "));
        assertThat(first.err()).contains("lost").contains(lock);
    }

    /**
     * A pause of {@code baton} longer than its lease (a long GC pause, a stalled container) while the server kept
     * the grant (the session strategy: the lock lives as long as the database session): the lease's local deadline
     * passed, but the server still shows the grant when {@code baton} runs again, so the lease was never lost and
     * the command (still running) finishes under it: its status, not 76.
     */
    @Test
    void aPausedBatonWhoseSessionKeptTheLockIsNotReportedLost() throws Exception {
        requireServer("PostgreSQL", 5432);
        String lock = uniqueLock("paused-session");
        Path started = dir.resolve("started-" + UUID.randomUUID());
        Path go = dir.resolve("go-" + UUID.randomUUID());
        Baton b = start("run", "--strategy", "session", "--lease", "500ms", "--lock", lock, "--url", PG, "--", "sh",
                "-c", "touch '" + started + "'; while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 3");
        awaitFile(started, b);
        pauseLongerThanTheLease(b.process().pid());
        Files.createFile(go);
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(3);
        assertThat(b.err()).doesNotContain("lost");
    }

    /**
     * The command ends while {@code baton} is paused for longer than its lease and the server keeps the grant:
     * {@code baton} sees the end only when it runs again, after the local deadline; the command ran entirely under
     * the lease, so its status, not 76.
     */
    @Test
    void aCommandThatEndedWhileBatonWasPausedIsNotReportedLost() throws Exception {
        requireServer("PostgreSQL", 5432);
        String lock = uniqueLock("ended-paused");
        Path started = dir.resolve("started-" + UUID.randomUUID());
        Path go = dir.resolve("go-" + UUID.randomUUID());
        Path done = dir.resolve("done-" + UUID.randomUUID());
        Baton b = start("run", "--strategy", "session", "--lease", "500ms", "--lock", lock, "--url", PG, "--", "sh",
                "-c", "touch '" + started + "'; while [ ! -e '" + go + "' ]; do sleep 0.05; done; touch '" + done
                        + "'; exit 3");
        awaitFile(started, b);
        long pid = b.process().pid();
        kill("STOP", pid);
        try {
            awaitState(pid, 'T');
            Files.createFile(go);
            awaitFile(done, null);
            Thread.sleep(1500); // past the local deadline (lease 500 ms) while stopped
        } finally {
            kill("CONT", pid);
        }
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(3);
        assertThat(b.err()).doesNotContain("lost");
    }

    /**
     * The lease strategy, whose grant ends on the server when its lease runs out: {@code baton} is stopped while
     * the command runs, the command (and its supervisor) end while the lease is still valid, and {@code baton}
     * stays stopped until the server shows the lease expired. When it runs again the server no longer shows the
     * grant, but the command ended before the lease's deadline (the supervisor, which was not stopped, recorded
     * when), so it ran entirely under the lease: its status, not 76.
     */
    @Test
    void aCommandThatEndedBeforeTheLeaseRanOutWhileBatonWasStoppedIsNotReportedLost() throws Exception {
        requireServer("PostgreSQL", 5432);
        try (Connection c = DriverManager.getConnection(PG)) {
            assertStoppedBaton(PG, lock -> expiredOnServer(c, lock), false, 3, "");
        }
    }

    /**
     * As above on Redis, where the lease's key expires by {@code PX}; once it has, another client takes the lock
     * before {@code baton} runs again. That grant came after the command ended, but {@code baton} cannot prove it:
     * a force-release or a forward step of the server's clock while it was stopped would look the same from here,
     * with the other grant before the command's end. Only a server that still shows this run's token (nobody was
     * granted the lock since) lets a stopped {@code baton} report the command's status; otherwise 76.
     */
    @Test
    void aLeaseTakenOverWhileBatonWasStoppedExits76EvenIfTheCommandEndedInTime() throws Exception {
        TestServers.requireRedis();
        List<Lease> taken = new ArrayList<>();
        try (RedisLockClient other = RedisLocks.builder(RedisURI.create(BatonRedisIT.URL))
                .leaseTime(Duration.ofSeconds(30)).build()) {
            assertStoppedBaton(BatonRedisIT.URL, lock -> other.lock(lock).tryAcquire().map(taken::add).orElse(false),
                    false, ExitCodes.LEASE_LOST, "lost");
            assertThat(taken).as("the other client took the lock once it expired").hasSize(1);
            taken.get(0).close();
        }
    }

    /**
     * The control: the same run, but the command ends only after the server shows the lease expired, while
     * {@code baton} is still stopped: the command outlived the lease, so 76.
     */
    @Test
    void aCommandThatEndedAfterTheLeaseRanOutWhileBatonWasStoppedExits76() throws Exception {
        requireServer("PostgreSQL", 5432);
        try (Connection c = DriverManager.getConnection(PG)) {
            assertStoppedBaton(PG, lock -> expiredOnServer(c, lock), true, ExitCodes.LEASE_LOST, "lost");
        }
    }

    /** Whether the server shows the lease of a lock ran out. */
    @FunctionalInterface
    private interface Expiry {
        boolean expired(String lock) throws Exception;
    }

    /**
     * Runs a command under a 3 s lease (lease strategy on a database, or Redis), SIGSTOPs {@code baton} while the command
     * runs, lets the command end before or after the server shows the lease expired, SIGCONTs {@code baton}
     * once the server shows it expired and the command's supervisor ended, and checks the exit status.
     */
    private void assertStoppedBaton(String url, Expiry expiry, boolean endAfterExpiry, int expectedStatus,
                                    String expectedErr) throws Exception {
        String lock = uniqueLock(endAfterExpiry ? "ended-after-expiry" : "ended-before-expiry");
        Path started = dir.resolve("started-" + UUID.randomUUID());
        Path go = dir.resolve("go-" + UUID.randomUUID());
        Path done = dir.resolve("done-" + UUID.randomUUID());
        Baton b = start("run", "--lease", "3s", "--lock", lock, "--url", url, "--", "sh", "-c",
                "touch '" + started + "'; while [ ! -e '" + go + "' ]; do sleep 0.02; done; touch '" + done
                        + "'; exit 3");
        awaitFile(started, b);
        long pid = b.process().pid();
        long supervisor = supervisorOf(pid);
        kill("STOP", pid);
        try {
            awaitState(pid, 'T');
            if (endAfterExpiry) {
                awaitExpired(expiry, lock);
            }
            Files.createFile(go);
            awaitFile(done, null);
            awaitState(supervisor, 'Z'); // the group ended; baton, stopped, has not collected its status
            if (!endAfterExpiry) {
                assertThat(expiry.expired(lock)).as("precondition: the command ended before the server's lease ran"
                        + " out (a machine too slow for a 3 s lease?)").isFalse();
                awaitExpired(expiry, lock);
            }
        } finally {
            kill("CONT", pid);
        }
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(expectedStatus);
        assertThat(b.errLines()).as("only baton's own lines").allMatch(l -> l.startsWith("baton: "));
        if (expectedErr.isEmpty()) {
            assertThat(b.err()).doesNotContain("lost");
        } else {
            assertThat(b.err()).contains(expectedErr).contains(lock);
        }
    }

    /** The pid of {@code baton run}'s supervisor, a child of the baton JVM {@code pid}. */
    private static long supervisorOf(long pid) throws IOException {
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try {
                    String stat = Files.readString(p.resolve("stat"));
                    String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    String cmdline = Files.readString(p.resolve("cmdline"));
                    if (Long.parseLong(after[1]) == pid && cmdline.startsWith("baton run: supervisor")) {
                        return Long.parseLong(name);
                    }
                } catch (IOException e) {
                    // gone meanwhile
                }
            }
        }
        return fail("no supervisor among the children of baton " + pid);
    }

    private static boolean expiredOnServer(Connection c, String lock) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT expires_at <= now() FROM baton_locks WHERE name = ?")) {
            ps.setString(1, lock);
            try (var rs = ps.executeQuery()) {
                assertThat(rs.next()).as("the row of '%s'", lock).isTrue();
                return rs.getBoolean(1);
            }
        }
    }

    private static void awaitExpired(Expiry expiry, String lock) {
        awaitAtMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .alias("the lease of '" + lock + "' expires on the server").until(() -> expiry.expired(lock));
    }

    /** SIGSTOP for three lease times (500 ms), then SIGCONT. */
    private static void pauseLongerThanTheLease(long pid) throws Exception {
        kill("STOP", pid);
        try {
            awaitState(pid, 'T');
            Thread.sleep(1500);
        } finally {
            kill("CONT", pid);
        }
    }

    /**
     * SIGSTOPs the process at a moment it holds no database transaction on the lock's row (else the second
     * baton would wait for the frozen one's row lock, or SQLite's write lock): stop, probe, and if the row is
     * locked, continue and try again.
     */
    private void freezeOutsideATransaction(long pid, String url, String lock) throws Exception {
        for (int attempt = 1; attempt <= 100; attempt++) {
            kill("STOP", pid);
            awaitState(pid, 'T');
            if (!rowLocked(url, lock)) {
                return;
            }
            kill("CONT", pid);
            Thread.sleep(37); // a different point of the renewal cycle next time
        }
        fail("baton " + pid + " held a transaction on '" + lock + "' at each of 100 freezes");
    }

    private boolean rowLocked(String url, String lock) throws SQLException {
        if (url.startsWith("jdbc:sqlite:")) {
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                st.execute("PRAGMA busy_timeout = 0");
                try {
                    st.execute("BEGIN IMMEDIATE");
                    st.execute("ROLLBACK");
                    return false;
                } catch (SQLException e) {
                    return true;
                }
            }
        }
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM baton_locks WHERE name = ? FOR UPDATE"
                    + " NOWAIT")) {
                ps.setString(1, lock);
                ps.executeQuery().close();
                return false;
            } catch (SQLException e) {
                return true;
            } finally {
                c.rollback();
            }
        }
    }

    @Test
    void aLostLeaseKillsTheWholeProcessGroupEvenWhatIgnoresSigterm() throws Exception {
        String lock = uniqueLock("lost-group");
        Path pids = dir.resolve("pids-" + UUID.randomUUID());
        Baton b = start("run", "--lease", "300ms", "--grace", "500ms", "--lock", lock, "--url", sqliteUrl(), "--",
                "sh", "-c", "(trap '' TERM; exec sleep 30) & echo $! $$ > '" + pids + ".tmp'; mv '" + pids + ".tmp' '"
                        + pids + "'; sleep 30");
        awaitFile(pids, b);
        List<Long> group = readPids(pids);
        takeOverSqlite(lock, b);
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(group).as("the command and the grandchild that ignores SIGTERM, when baton exited")
                .noneMatch(BatonRunIT::isRunning);
    }

    @Test
    void aForwardedSigtermReachesTheWholeGroupAndWhatIgnoresItIsKilledAfterTheGrace() throws Exception {
        String lock = uniqueLock("term-group");
        Path pids = dir.resolve("pids-" + UUID.randomUUID());
        Baton b = start("run", "--grace", "500ms", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "(trap '' TERM; exec sleep 30) & a=$!; sleep 30 & echo $a $! > '" + pids + ".tmp'; mv '" + pids
                        + ".tmp' '" + pids + "'; wait");
        awaitFile(pids, b);
        List<Long> grandchildren = readPids(pids);
        b.process().destroy();
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(128 + 15);
        assertThat(grandchildren).as("grandchildren when baton exited").noneMatch(BatonRunIT::isRunning);
        assertLockFree(lock);
    }

    @Test
    void whatTheCommandLeavesRunningIsStoppedBeforeTheLockIsReleased() throws Exception {
        String lock = uniqueLock("leftover");
        Path pids = dir.resolve("pids-" + UUID.randomUUID());
        Baton b = start("run", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "sleep 30 & echo $! > '" + pids + "'; exit 5");
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(5);
        assertThat(readPids(pids)).as("the command's background sleep when baton exited")
                .noneMatch(BatonRunIT::isRunning);
        assertThat(b.err()).isEmpty();
    }

    /** kill -9 of baton; the kernel's OOM killer sends the same SIGKILL. */
    @Test
    void killingBatonWithSigkillKillsTheCommandAndEverythingItStarted() throws Exception {
        String lock = uniqueLock("kill9");
        Path pids = dir.resolve("pids-" + UUID.randomUUID());
        Baton b = start("run", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "sleep 30 & echo $! $$ > '" + pids + ".tmp'; mv '" + pids + ".tmp' '" + pids + "'; exec sleep 31");
        awaitFile(pids, b);
        List<Long> group = readPids(pids);
        assertThat(group).allMatch(BatonRunIT::isRunning);
        b.process().destroyForcibly();
        b.process().waitFor();
        awaitAtMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(group)
                .as("the command and its child 10 s after baton was killed").noneMatch(BatonRunIT::isRunning));
    }

    /**
     * The second line of defence: the command's parent-death signal (prctl by the supervisor, else setpriv) ties it
     * to its supervisor.
     */
    @Test
    void killingTheSupervisorWithSigkillKillsTheCommand() throws Exception {
        killTheSupervisorAndSeeTheCommandGo(List.of());
    }

    /**
     * As above with no setpriv to fall back on (PATH holds only what the call runs): the supervisor's own prctl must
     * set the signal, or the command outlives it.
     */
    @Test
    void killingTheSupervisorWithSigkillKillsTheCommandWithoutSetpriv() throws Exception {
        Path bin = dir.resolve("bin-" + UUID.randomUUID());
        Files.createDirectories(bin);
        for (String tool : List.of("sh", "sleep", "mv", "perl", "mkfifo")) {
            Path real = List.of(Path.of("/usr/bin", tool), Path.of("/bin", tool)).stream().filter(Files::isExecutable)
                    .findFirst().orElseThrow(() -> new AssertionError("no " + tool + " in /usr/bin or /bin"));
            Files.createSymbolicLink(bin.resolve(tool), real);
        }
        killTheSupervisorAndSeeTheCommandGo(List.of("PATH=" + bin));
    }

    private void killTheSupervisorAndSeeTheCommandGo(List<String> wrapper) throws Exception {
        String lock = uniqueLock("kill9-supervisor");
        Path pid = dir.resolve("pid-" + UUID.randomUUID());
        Baton b = start(wrapper, "run", "--lock", lock, "--url", sqliteUrl(), "--", "sh", "-c",
                "echo $$ > '" + pid + ".tmp'; mv '" + pid + ".tmp' '" + pid + "'; exec sleep 31");
        awaitFile(pid, b);
        long command = readPids(pid).get(0);
        ProcessHandle supervisor = ProcessHandle.of(command).flatMap(ProcessHandle::parent).orElseThrow();
        assertThat(supervisor.parent().map(ProcessHandle::pid)).as("the supervisor is baton's child")
                .contains(b.process().pid());
        kill("KILL", supervisor.pid());
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(128 + 9);
        awaitAtMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(isRunning(command)).as("the command 10 s after its supervisor was killed").isFalse());
    }

    @Test
    void sigquitPrintsNoThreadDumpIntoTheCommandsOutputThroughTheLauncher() throws Exception {
        Path launcher = Path.of("").toAbsolutePath().getParent().resolve("bin").resolve("baton");
        assertThat(launcher).as("bin/baton of this checkout").isExecutable();
        String lock = uniqueLock("quit");
        // The first launcher call after a build runs the start-up training (five JVMs and archive dumps) before
        // baton; under load that alone outlasted the 20 s wait for the command below. A call of its own first, so
        // that wait covers baton's start only; its bound only stops a hung launcher from hanging the build.
        Baton warm = spawn(List.of("env", "--default-signal", launcher.toString(), "version"));
        assertThat(warm.awaitExit(LAUNCHER_FIRST_CALL_TIMEOUT)).as("bin/baton version; stderr: %s", warm.err())
                .isZero();
        Path ready = dir.resolve("ready-" + UUID.randomUUID());
        Baton b = spawn(List.of("env", "--default-signal", launcher.toString(), "run", "--lock", lock, "--url",
                sqliteUrl(), "--", "sh", "-c", "trap 'exit 7' TERM; echo command-output; touch '" + ready
                        + "'; while :; do sleep 0.05; done"));
        awaitFile(ready, b);
        kill("QUIT", b.process().pid());
        // the JVM handles SIGQUIT before SIGTERM (lower number first, the dump synchronously), so any dump is
        // written by the time the command ends
        b.process().destroy();
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(7);
        assertThat(b.out()).isEqualTo("command-output\n");
        assertThat(b.err()).doesNotContain("Full thread dump");
    }

    /** A copy of bin/baton with a pom.xml of version 9.9.9-TEST, in a temporary checkout of its own. */
    private Path launcherCheckout(String name) throws IOException {
        Path launcher = Path.of("").toAbsolutePath().getParent().resolve("bin").resolve("baton");
        Path checkout = dir.resolve(name);
        Files.createDirectories(checkout.resolve("bin"));
        Files.copy(launcher, checkout.resolve("bin/baton"));
        checkout.resolve("bin/baton").toFile().setExecutable(true);
        Files.writeString(checkout.resolve("pom.xml"), "<project>\n  <version>9.9.9-TEST</version>\n</project>\n");
        return checkout;
    }

    /** A PATH folder holding only the tools the launcher itself needs (no mvn, no java). */
    private Path launcherTools(String name) throws IOException {
        Path tools = dir.resolve(name);
        Files.createDirectories(tools);
        for (String tool : List.of("bash", "readlink", "sed", "find", "mkdir", "flock")) {
            Path real = java.util.stream.Stream.of("/usr/bin", "/bin").map(d -> Path.of(d, tool))
                    .filter(Files::isExecutable).findFirst().orElseThrow(() -> new AssertionError(tool + " not found"));
            Files.createSymbolicLink(tools.resolve(tool), real);
        }
        return tools;
    }

    /**
     * bin/baton, copied with a pom.xml into a temporary checkout of its own (so the real jar, which other tests
     * use, is never touched), run with a PATH holding only the tools the script itself needs: no mvn, no java.
     * A missing jar it cannot build, or a jar it has no java to run, is a configuration error (78) naming what
     * is missing, not "a bug in baton" (70) after "mvn: command not found".
     */
    @Test
    void withoutMavenOrJavaTheLauncherExits78SayingWhatIsMissing() throws Exception {
        Path checkout = launcherCheckout("checkout");
        Path tools = launcherTools("tools");
        Map<String, String> env = Map.of("PATH", tools.toString(), "HOME", dir.toString());

        Baton noJar = spawnWithEnvironment(env, checkout.resolve("bin/baton").toString(), "version");
        assertThat(noJar.awaitExit(EXIT_TIMEOUT)).as("no jar, no mvn; stderr: %s", noJar.err()).isEqualTo(78);
        assertThat(noJar.err()).contains("Maven").contains("JDK 17").contains("mvn").doesNotContain("command not found");
        assertThat(noJar.errLines()).as("stderr").allMatch(l -> l.startsWith("baton: "));

        Path jar = checkout.resolve("baton-cli/target/baton-cli-9.9.9-TEST-all.jar");
        Files.createDirectories(jar.getParent());
        Files.writeString(jar, "not run"); // newer than every source: not stale, so it is run
        Baton noJava = spawnWithEnvironment(env, checkout.resolve("bin/baton").toString(), "version");
        assertThat(noJava.awaitExit(EXIT_TIMEOUT)).as("jar, no java; stderr: %s", noJava.err()).isEqualTo(78);
        assertThat(noJava.err()).contains("java").contains("17").doesNotContain("No such file");
        assertThat(noJava.errLines()).as("stderr").allMatch(l -> l.startsWith("baton: "));
    }

    /**
     * The first build says what it does, one line per module, and its stderr carries no escape sequence: a fake
     * mvn (no JVM is started) writes what Maven 3.8 writes to a pipe, ESC[0m resets included, and fails.
     */
    @Test
    void theBuildShowsProgressWithoutEscapeSequences() throws Exception {
        Path checkout = launcherCheckout("checkout-esc");
        Path tools = launcherTools("tools-esc");
        Path mvn = tools.resolve("mvn");
        Files.writeString(mvn, "#!/bin/bash\n"
                + "printf '\\033[0m\\033[0m'; printf '\\033[0m' >&2\n"
                + "echo '[INFO] Scanning for projects...'\n"
                + "echo '[INFO] Building baton-core 9.9.9-TEST                                [1/2]'\n"
                + "echo '[INFO] Building baton-cli 9.9.9-TEST                                 [2/2]'\n"
                + "printf '[ERROR] \\033[1mMAVEN_OPTS=%s\\033[m\\n' \"$MAVEN_OPTS\"\n"
                + "printf '\\033[0m'; exit 1\n");
        mvn.toFile().setExecutable(true);

        Baton b = spawnWithEnvironment(Map.of("PATH", tools.toString(), "HOME", dir.toString()),
                checkout.resolve("bin/baton").toString(), "version");

        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(70);
        assertThat(b.err()).as("stderr").doesNotContain("\u001b");
        assertThat(b.errLines()).as("stderr").allMatch(l -> l.startsWith("baton: "))
                .contains("baton: building baton-core (1/2)", "baton: building baton-cli (2/2)", "baton: build failed")
                .anyMatch(l -> l.startsWith("baton: mvn: MAVEN_OPTS=") && l.contains("-Djansi.noreset=true"));
        assertThat(b.errLines().get(0)).contains("building").contains("Maven");
    }

    /**
     * The launcher picks the class-data archive of the backend the call's URL names, and an archive that is
     * unusable (not an archive, or one made for another jar) or missing for that backend never makes the call
     * fail, whichever way the URL is given: a copy of bin/baton in a checkout of its own, with this build's jar
     * and a start-up directory whose stamp says the training was done.
     */
    @Test
    void anUnusableOrMissingArchiveOfTheCallsBackendOnlyMakesTheStartSlower() throws Exception {
        Path target = Path.of("").toAbsolutePath().resolve("target");
        Path builtJar;
        try (var jars = Files.list(target)) {
            builtJar = jars.filter(p -> p.getFileName().toString().endsWith("-all.jar")).findFirst()
                    .orElseThrow(() -> new AssertionError("no shaded jar in " + target));
        }
        Path checkout = launcherCheckout("checkout-archive");
        Path jar = checkout.resolve("baton-cli/target/baton-cli-9.9.9-TEST-all.jar");
        Path start = checkout.resolve("baton-cli/target/baton-start");
        Files.createDirectories(start);
        Files.copy(builtJar, jar);
        FileTime now = FileTime.fromMillis(System.currentTimeMillis());
        FileTime earlier = FileTime.fromMillis(System.currentTimeMillis() - 60_000);
        FileTime earliest = FileTime.fromMillis(System.currentTimeMillis() - 120_000);
        Files.setLastModifiedTime(checkout.resolve("pom.xml"), earliest);
        Files.setLastModifiedTime(jar, earlier); // newer than the pom, the checkout's only source: not rebuilt
        for (String backend : List.of("sqlite", "postgresql", "mariadb", "redis", "zookeeper")) {
            Files.writeString(start.resolve("classes-" + backend + ".jsa"), "not an archive");
        }
        Files.writeString(start.resolve("tried"), "");
        try (var files = Files.list(start)) {
            for (Path f : files.toList()) {
                Files.setLastModifiedTime(f, now); // newer than the jar: used, and no training run
            }
        }
        Map<String, String> env = new HashMap<>(Map.of("PATH", System.getenv("PATH"), "HOME", dir.toString()));
        if (System.getenv("JAVA_HOME") != null) {
            env.put("JAVA_HOME", System.getenv("JAVA_HOME"));
        }
        String launcher = checkout.resolve("bin/baton").toString();

        Baton garbage = spawnWithEnvironment(env, launcher, "run", "--url", sqliteUrl(), "--lock",
                uniqueLock("archive"), "--", "echo", "ran");
        assertThat(garbage.awaitExit(EXIT_TIMEOUT)).as("not an archive; stderr: %s", garbage.err()).isEqualTo(0);
        assertThat(garbage.out()).isEqualTo("ran\n");

        Path ownArchive = target.resolve("baton-start/classes-sqlite.jsa");
        if (Files.isRegularFile(ownArchive)) { // the archive of another jar (this build's, at another path)
            Files.copy(ownArchive, start.resolve("classes-sqlite.jsa"), StandardCopyOption.REPLACE_EXISTING);
            Files.setLastModifiedTime(start.resolve("classes-sqlite.jsa"), now);
            Baton other = spawnWithEnvironment(env, launcher, "run", "--url=" + sqliteUrl(), "--lock",
                    uniqueLock("archive"), "--", "echo", "ran");
            assertThat(other.awaitExit(EXIT_TIMEOUT)).as("another jar's archive; stderr: %s", other.err()).isEqualTo(0);
            assertThat(other.out()).isEqualTo("ran\n");
        }

        Files.delete(start.resolve("classes-sqlite.jsa")); // the other backends' archives are still there
        Map<String, String> withUrl = new HashMap<>(env);
        withUrl.put("BATON_URL", sqliteUrl());
        Baton missing = spawnWithEnvironment(withUrl, launcher, "run", "--lock", uniqueLock("archive"), "--", "echo",
                "ran");
        assertThat(missing.awaitExit(EXIT_TIMEOUT)).as("no archive; stderr: %s", missing.err()).isEqualTo(0);
        assertThat(missing.out()).isEqualTo("ran\n");
        assertThat(start.resolve("classes-sqlite.jsa")).as("no training retried on a call").doesNotExist();
    }

    /** Spawns {@code cmd} with exactly {@code environment} (nothing inherited). */
    private Baton spawnWithEnvironment(Map<String, String> environment, String... cmd) throws IOException {
        String id = UUID.randomUUID().toString();
        Path out = dir.resolve("cmd-" + id + ".out");
        Path err = dir.resolve("cmd-" + id + ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().clear();
        pb.environment().putAll(environment);
        return new Baton(pb.start(), out, err);
    }

    /**
     * A terminal's Ctrl-C signals its foreground process group: here baton's, made a group of its own so the
     * test can signal it as a terminal would. The command, in a group of its own, gets SIGINT from baton only.
     */
    @Test
    void aTerminalCtrlCReachesTheCommandOnce() throws Exception {
        String lock = uniqueLock("ctrl-c");
        Path count = dir.resolve("count-" + UUID.randomUUID());
        Path ready = dir.resolve("ready-" + UUID.randomUUID());
        Path stop = dir.resolve("stop-" + UUID.randomUUID());
        Baton b = start(List.of("perl", "-e", "setpgrp(0, 0); exec @ARGV or die $!", "--"), "run", "--verbose",
                "--lock", lock, "--url", sqliteUrl(), "--", "perl", "-e",
                "$SIG{INT} = sub { open(my $f, '>>', $ARGV[0]) or die; print $f \"INT\\n\"; close $f };"
                        + " open(my $r, '>', $ARGV[1]) or die; close $r;"
                        + " select(undef, undef, undef, 0.02) until -e $ARGV[2]; exit 0",
                count.toString(), ready.toString(), stop.toString());
        awaitFile(ready, b);
        kill("INT", -b.process().pid());
        awaitAtMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(b.err()).as("baton passed SIGINT on").contains("passed SIGINT on");
            assertThat(count).as("the command counted its SIGINTs").exists();
        });
        Files.createFile(stop);
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isZero();
        assertThat(Files.readAllLines(count)).as("SIGINTs the command received").containsExactly("INT");
    }

    /**
     * In a terminal's foreground (here a pseudo-terminal from util-linux's script(1)), the command's group gets
     * the terminal as a shell's foreground job would: a command in a background group that reads the
     * terminal would be stopped by SIGTTIN and hang.
     */
    @Test
    void aCommandThatReadsTheTerminalGetsItWhenBatonRunsInTheForeground() throws Exception {
        String lock = uniqueLock("tty");
        Path input = dir.resolve("input-" + UUID.randomUUID());
        Files.writeString(input, "hello\n");
        List<String> baton = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                        .toString(), "-XX:TieredStopAtLevel=1", "-XX:+UnlockDiagnosticVMOptions", "-XX:-DisplayVMOutput",
                "-cp", System.getProperty("java.class.path"), BatonCommand.class.getName(), "run", "--lock", lock,
                "--url", sqliteUrl(), "--", "sh", "-c", "read x; echo \"got:$x\"; exit 3"));
        String line = String.join(" ", baton.stream().map(a -> "'" + a.replace("'", "'\\''") + "'").toList());
        String id = UUID.randomUUID().toString();
        Path out = dir.resolve("script-" + id + ".out");
        Path err = dir.resolve("script-" + id + ".err");
        ProcessBuilder pb = new ProcessBuilder("env", "--default-signal", "script", "-qec", line, "/dev/null")
                .redirectInput(input.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().remove("BATON_URL");
        Baton b = new Baton(pb.start(), out, err);
        assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stdout: %s stderr: %s", b.out(), b.err()).isEqualTo(3);
        assertThat(b.out()).contains("got:hello");
    }

    @Test
    void waitingSaysWhoHoldsTheLockAndQuietSilencesItAndTheConflictCodeReplaces75() throws Exception {
        String lock = uniqueLock("waiting");
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        try (JdbcLockClient locks = JdbcLocks.builder(ds).createTableIfMissing().build();
             Lease held = locks.lock(lock).tryAcquire().orElseThrow()) {
            Baton loud = start("run", "-w", "0.3", "--lock", lock, "--url", sqliteUrl(), "--", "true");
            Baton quiet = start("run", "--quiet", "-w", "1", "--conflict-exit-code", "3", "--lock", lock, "--url",
                    sqliteUrl(), "--", "true");
            assertThat(loud.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", loud.err()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            assertThat(loud.errLines()).hasSize(2);
            assertThat(loud.errLines().get(0)).startsWith("baton: waiting for lock '" + lock + "': held by "
                    + held.holderId() + " (token " + held.fencingToken() + ", lease ends in ");
            assertThat(loud.errLines().get(1)).startsWith("baton: lock '" + lock + "' not acquired within 300 ms");
            assertThat(quiet.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", quiet.err()).isEqualTo(3);
            assertThat(quiet.errLines()).singleElement().asString().contains("not acquired within 1000 ms");
        }
    }

    /** Today's cause of a ~13 s exit: retrying the release and closing the pool on a dead network. */
    @Test
    void afterALostLeaseOnADeadNetworkBatonExitsWithinTheLeaseTime() throws Exception {
        requireServer("PostgreSQL", 5432);
        String lock = uniqueLock("dead-network");
        Path ready = dir.resolve("ready-" + UUID.randomUUID());
        try (FaultProxy proxy = new FaultProxy("127.0.0.1", 5432)) {
            String url = "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/test?user=postgres";
            Baton b = start("run", "--lease", "2s", "--grace", "500ms", "--lock", lock, "--url", url, "--", "sh",
                    "-c", "touch '" + ready + "'; exec sleep 60");
            awaitFile(ready, b);
            proxy.fault(FaultProxy.Mode.BLACKHOLE);
            long t0 = System.nanoTime();
            assertThat(b.awaitExit(EXIT_TIMEOUT)).as("stderr: %s", b.err()).isEqualTo(ExitCodes.LEASE_LOST);
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            // lost within the lease (2 s), the group stopped at once, release and close bounded by the lease (2 s)
            assertThat(took).as("from the network's death to baton's exit").isLessThan(Duration.ofSeconds(8));
        }
    }

    private void takeOverSqlite(String lock, Baton b) throws Exception {
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(sqliteUrl());
        try (Connection c = ds.getConnection()) {
            // SQLite times are epoch milliseconds by SQLite's clock.
            awaitWhileRunning(b, "the row of '" + lock + "' was taken over", () -> {
                try (PreparedStatement ps = c.prepareStatement("UPDATE baton_locks SET owner = 'intruder',"
                        + " token = token + 1000000, expires_at = expires_at + 60000 WHERE name = ?"
                        + " AND owner IS NOT NULL")) {
                    ps.setString(1, lock);
                    if (ps.executeUpdate() == 1) {
                        return true;
                    }
                } catch (SQLException e) {
                    // no table yet, or the database is busy: try again
                }
                return false;
            });
        }
    }

    private void assertLockFree(String lock) throws Exception {
        Baton after = start("run", "--wait", "0", "--lock", lock, "--url", sqliteUrl(), "--", "true");
        assertThat(after.awaitExit(EXIT_TIMEOUT)).as("lock free afterwards; stderr: %s", after.err()).isZero();
    }

    /** Waits for a file the command writes; fails if {@code b} (when given) exits first. */
    private static void awaitFile(Path file, Baton b) {
        awaitWhileRunning(b, file + " appeared", () -> Files.exists(file));
    }

    /**
     * Waits at most 20 s for {@code condition}; fails at once if {@code b} (when given) has exited before it held,
     * and names baton's status and stderr in either failure.
     */
    private static void awaitWhileRunning(Baton b, String what, Callable<Boolean> condition) {
        try {
            awaitAtMost(Duration.ofSeconds(20)).alias(what).until(() -> {
                if (condition.call()) {
                    return true;
                }
                if (b != null && !b.process().isAlive()) {
                    fail("baton exited with " + b.process().exitValue() + " before " + what + "; stderr: " + b.err());
                }
                return false;
            });
        } catch (ConditionTimeoutException e) {
            fail(e.getMessage() + (b == null ? "" : "; stderr: " + b.err()), e);
        }
    }

    /** Polls every 20 ms for at most {@code atMost}; an exception the condition throws fails the wait at once. */
    private static ConditionFactory awaitAtMost(Duration atMost) {
        return Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(20));
    }

    private static List<Long> readPids(Path file) throws IOException {
        return java.util.Arrays.stream(Files.readString(file).trim().split("\\s+")).map(Long::parseLong).toList();
    }

    /** Whether the process exists and is not a zombie (which only waits for its status to be collected). */
    static boolean isRunning(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException e) {
            return false;
        }
    }

    private static void awaitState(long pid, char state) {
        awaitAtMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .alias("process " + pid + " reaches state " + state).until(() -> {
                    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                    return stat.charAt(stat.lastIndexOf(')') + 2) == state;
                });
    }

    /** kill(1) with a signal name; a negative pid is a process group. */
    private static void kill(String signal, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-s", signal, "--", Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -s %s %d", signal, pid).isZero();
    }
}
