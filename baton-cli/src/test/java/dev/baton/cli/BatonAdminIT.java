package dev.baton.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.Lease;
import dev.baton.LockLostException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sqlite.SQLiteDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * The operator's commands ({@code status}, {@code list}, {@code release}, {@code purge}) run in-process against
 * SQLite and the PostgreSQL and MariaDB servers that {@code scripts/start-servers.sh} starts, each test on a
 * table of its own, while a lock client of the library holds locks in the same table.
 */
class BatonAdminIT {
    static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

    enum Backend {
        SQLITE, POSTGRESQL, MARIADB;

        boolean hasSessions() {
            return this != SQLITE;
        }
    }

    @TempDir
    Path dir;

    private final String table = "cli_admin_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private DataSource dataSource;

    record Result(int status, String out, String err) {
    }

    static Result baton(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = BatonCommand.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(status, out.toString(), err.toString());
    }

    private String url(Backend backend) {
        return switch (backend) {
            case SQLITE -> "jdbc:sqlite:" + dir.resolve("locks.db");
            case POSTGRESQL -> PG;
            case MARIADB -> MARIADB;
        };
    }

    /** The command's arguments followed by the URL and this test's table. */
    private String[] args(Backend backend, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--url", url(backend), "--table", table));
        return all.toArray(String[]::new);
    }

    private static void requireServer(Backend backend) {
        int port = backend == Backend.POSTGRESQL ? 5432 : backend == Backend.MARIADB ? 3306 : -1;
        if (port < 0) {
            return;
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        } catch (IOException e) {
            fail(backend + " is not reachable at 127.0.0.1:" + port + " (" + e.getMessage() + "); start it with"
                    + " scripts/start-servers.sh");
        }
    }

    private DataSource dataSource(Backend backend) {
        requireServer(backend);
        if (dataSource == null) {
            if (backend == Backend.SQLITE) {
                SQLiteDataSource ds = new SQLiteDataSource();
                ds.setUrl(url(backend));
                dataSource = ds;
            } else {
                HikariConfig config = new HikariConfig();
                config.setJdbcUrl(url(backend));
                config.setMaximumPoolSize(6);
                HikariDataSource pool = new HikariDataSource(config);
                cleanup.add(pool);
                dataSource = pool;
            }
        }
        return dataSource;
    }

    private JdbcLockClient client(Backend backend, Strategy strategy, Duration lease) {
        JdbcLockClient client = JdbcLocks.builder(dataSource(backend)).createTableIfMissing().tableName(table)
                .strategy(strategy).leaseTime(lease).build();
        cleanup.add(0, client);
        return client;
    }

    @AfterEach
    void dropTablesAndClose() throws Exception {
        for (AutoCloseable c : new ArrayList<>(cleanup.subList(0, cleanup.size()))) {
            if (!(c instanceof HikariDataSource)) {
                c.close();
            }
        }
        if (dataSource instanceof HikariDataSource pool) {
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                for (String t : List.of(table, table + "_rw", table + "_names", table + "_token")) {
                    st.execute("DROP TABLE IF EXISTS " + t);
                }
                st.execute("DROP SEQUENCE IF EXISTS " + table + "_token_seq");
            } finally {
                pool.close();
            }
        }
    }

    private static String lock(String what) {
        return "cli-admin-" + what + "-" + UUID.randomUUID();
    }

    // ---- status ----

    @ParameterizedTest
    @EnumSource(Backend.class)
    void statusExitsZeroWithHolderTokenAndLeaseEndWhileHeldAndOneWhenFree(Backend backend) {
        JdbcLockClient locks = client(backend, Strategy.LEASE, Duration.ofSeconds(30));
        String name = lock("status");
        try (Lease held = locks.lock(name).tryAcquire().orElseThrow()) {
            Result r = baton(args(backend, "status", name));

            assertThat(r.status()).as(r.err()).isZero();
            assertThat(r.out().lines().toList()).singleElement().asString()
                    .contains("'" + name + "' is held by " + held.holderId())
                    .contains("token " + held.fencingToken()).contains("lease ends 20");
        }
        Result free = baton(args(backend, "status", name));
        assertThat(free.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(free.out()).contains("is free (last grant: token");
        Result never = baton(args(backend, "status", lock("never")));
        assertThat(never.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(never.out()).contains("is free (no row");
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"POSTGRESQL", "MARIADB"})
    void statusSeesASessionLock(Backend backend) {
        JdbcLockClient sessions = client(backend, Strategy.SESSION, Duration.ofSeconds(30));
        String name = lock("status-session");
        try (Lease held = sessions.lock(name).tryAcquire().orElseThrow()) {
            Result r = baton(args(backend, "status", name));

            assertThat(r.status()).as(r.err()).isZero();
            assertThat(r.out()).contains("is held by").contains("session lock");
        }
    }

    // ---- release ----

    @ParameterizedTest
    @EnumSource(Backend.class)
    void releaseWithTheTokenEndsThatGrantAndItsHolderLosesIt(Backend backend) throws Exception {
        JdbcLockClient holder = client(backend, Strategy.LEASE, Duration.ofSeconds(3));
        JdbcLockClient other = client(backend, Strategy.LEASE, Duration.ofSeconds(30));
        String name = lock("release");
        Lease held = holder.lock(name).tryAcquire().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        held.onLost(lost::complete);

        Result wrong = baton(args(backend, "release", name, "--token", Long.toString(held.fencingToken() + 1000)));
        assertThat(wrong.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(wrong.err()).contains("held under token " + held.fencingToken() + ", not "
                + (held.fencingToken() + 1000) + ": nothing released");
        assertThat(other.lock(name).tryAcquire()).as("a wrong token releases nothing").isEmpty();

        Result r = baton(args(backend, "release", name, "--token", Long.toString(held.fencingToken())));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("released lock '" + name + "': holder " + held.holderId() + ", token "
                + held.fencingToken());

        try (Lease next = other.lock(name).tryAcquire().orElseThrow()) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(lost.get(20, TimeUnit.SECONDS).getMessage()).contains(name);
            assertThat(held.isValid()).isFalse();
            held.close(); // the stale holder's release cannot touch its successor's grant
            assertThat(baton(args(backend, "status", name)).out()).contains("token " + next.fencingToken());

            Result again = baton(args(backend, "release", name, "--token", Long.toString(held.fencingToken())));
            assertThat(again.status()).isEqualTo(ExitCodes.NOT_HELD);
            assertThat(next.isValid()).as("a stale token never ends a later grant").isTrue();
            next.checkValid();
        }
        Result none = baton(args(backend, "release", name));
        assertThat(none.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(none.err()).contains("is free").contains("nothing released");
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void releaseWithoutTokenEndsWhicheverGrantIsLive(Backend backend) {
        JdbcLockClient holder = client(backend, Strategy.LEASE, Duration.ofSeconds(30));
        String name = lock("release-any");
        Lease held = holder.lock(name).tryAcquire().orElseThrow();

        Result r = baton(args(backend, "release", name));

        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("token " + held.fencingToken());
        assertThat(baton(args(backend, "status", name)).status()).isEqualTo(ExitCodes.NOT_HELD);
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"POSTGRESQL", "MARIADB"})
    void releaseRefusesASessionLockNamingItsHolder(Backend backend) {
        JdbcLockClient sessions = client(backend, Strategy.SESSION, Duration.ofSeconds(30));
        String name = lock("release-session");
        try (Lease held = sessions.lock(name).tryAcquire().orElseThrow()) {
            Result r = baton(args(backend, "release", name));

            assertThat(r.status()).isEqualTo(ExitCodes.NOT_HELD);
            assertThat(r.err()).contains("is a session lock held by")
                    .contains(backend == Backend.POSTGRESQL ? "(pid " : "connection ")
                    .contains(backend == Backend.POSTGRESQL ? "pg_terminate_backend" : "KILL");
            assertThat(held.isValid()).isTrue();
            assertThat(baton(args(backend, "status", name)).status()).isZero();
        }
    }

    // ---- purge ----

    @ParameterizedTest
    @EnumSource(Backend.class)
    void purgeDeletesRowsThatEndedLongEnoughAgoAndNeverAHeldOne(Backend backend) {
        JdbcLockClient locks = client(backend, Strategy.LEASE, Duration.ofSeconds(30));
        String ended = lock("purge-ended");
        String held = lock("purge-held");
        locks.lock(ended).tryAcquire().orElseThrow().close();
        try (Lease h = locks.lock(held).tryAcquire().orElseThrow()) {
            Result first = baton(args(backend, "purge", "--older-than", "1h"));
            assertThat(first.status()).as(first.err()).isZero();
            assertThat(first.out()).startsWith("purged 0 rows");

            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                Result r = baton(args(backend, "purge", "--older-than", "1s"));
                assertThat(r.status()).as(r.err()).isZero();
                assertThat(baton(args(backend, "status", ended)).out()).contains("no row");
            });
            assertThat(baton(args(backend, "status", held)).status()).isZero();
        }
    }

    // ---- list ----

    @ParameterizedTest
    @EnumSource(Backend.class)
    void listJsonHasEveryLockWithItsStateAndSessionLocksToo(Backend backend) throws Exception {
        JdbcLockClient locks = client(backend, Strategy.LEASE, Duration.ofSeconds(30));
        String heldName = lock("json-held") + "\u202E";
        String freeName = lock("json-free");
        locks.lock(freeName).tryAcquire().orElseThrow().close();
        Lease sessionLease = null;
        String sessionName = lock("json-session");
        if (backend.hasSessions()) {
            sessionLease = client(backend, Strategy.SESSION, Duration.ofSeconds(30)).lock(sessionName).tryAcquire()
                    .orElseThrow();
        }
        try (Lease held = locks.lock(heldName).tryAcquire().orElseThrow()) {
            Result r = baton(args(backend, "list", "--json"));

            assertThat(r.status()).as(r.err()).isZero();
            assertThat(r.out()).doesNotContain("\u202E");
            JsonNode all = new ObjectMapper().readTree(r.out());
            JsonNode h = find(all, heldName);
            assertThat(h.get("state").asText()).isEqualTo("held");
            assertThat(h.get("strategy").asText()).isEqualTo("lease");
            assertThat(h.get("holder").asText()).isEqualTo(held.holderId());
            assertThat(h.get("token").asLong()).isEqualTo(held.fencingToken());
            JsonNode f = find(all, freeName);
            assertThat(f.get("state").asText()).isEqualTo("free");
            assertThat(f.get("holder").isNull()).isTrue();
            if (sessionLease != null) {
                JsonNode s = find(all, sessionName);
                assertThat(s.get("state").asText()).isEqualTo("held");
                assertThat(s.get("strategy").asText()).isEqualTo("session");
                assertThat(s.get("expiresAt").isNull()).isTrue();
                sessionLease.close();
            }

            Result table = baton(args(backend, "list"));
            assertThat(table.status()).as(table.err()).isZero();
            assertThat(table.out()).contains(heldName.replace("\u202E", "\\u202E")).doesNotContain("\u202E");
        }
    }

    private static JsonNode find(JsonNode all, String name) {
        for (JsonNode n : all) {
            if (n.get("name").asText().equals(name)) {
                return n;
            }
        }
        throw new AssertionError("no entry named " + name + " in " + all);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void listStatusReleaseAndPurgeNeverCreateATable(Backend backend) throws SQLException {
        client(backend, Strategy.LEASE, Duration.ofSeconds(30)); // the database and the right table exist
        String typo = table + "_typo";
        for (List<String> command : List.of(List.of("list"), List.of("status", "x"), List.of("release", "x"),
                List.of("purge", "--older-than", "1h"))) {
            List<String> all = new ArrayList<>(command);
            all.addAll(List.of("--url", url(backend), "--table", typo));
            Result r = baton(all.toArray(String[]::new));

            assertThat(r.status()).as("%s: %s", command, r.err()).isEqualTo(ExitCodes.NO_TABLE);
            assertThat(r.err().lines().toList()).as("%s", command).singleElement().asString()
                    .startsWith("baton: no lock table '" + typo + "' in ").contains("(is --table right?)");
        }
        try (Connection c = dataSource(backend).getConnection(); Statement st = c.createStatement()) {
            st.executeQuery("SELECT 1 FROM " + typo);
            fail("table " + typo + " was created");
        } catch (SQLException expected) {
            assertThat(DatabaseErrors.isMissingTable(expected)).as(expected.getMessage()).isTrue();
        }
    }

    @Test
    void listAndStatusWorkOnAReadOnlySqliteFileNoProcessHasOpen() throws Exception {
        String name = lock("read-only");
        // made as operators make it: by baton run, in WAL mode (a read-only open then needs a -shm file)
        Result run = baton("run", "--lock", name, "--url", url(Backend.SQLITE), "--table", table, "--", "true");
        assertThat(run.status()).as(run.err()).isZero();
        Path file = dir.resolve("locks.db");
        assertThat(dir.resolve("locks.db-shm")).as("closed cleanly").doesNotExist();
        try (ReadOnly ignored = ReadOnly.make(file, dir)) {
            Result list = baton(args(Backend.SQLITE, "list"));
            assertThat(list.status()).as(list.err()).isZero();
            assertThat(list.out()).contains(name);

            Result status = baton(args(Backend.SQLITE, "status", name));
            assertThat(status.status()).as(status.err()).isEqualTo(ExitCodes.NOT_HELD);
            assertThat(status.out()).contains("is free (last grant");
        }
    }

    @Test
    void aStuckLockInAReadOnlySqliteFileIsListedAndItsReleaseRefusedNamingTheFile() throws Exception {
        JdbcLockClient locks = client(Backend.SQLITE, Strategy.LEASE, Duration.ofSeconds(60));
        String name = lock("read-only-held");
        Lease held = locks.lock(name).tryAcquire().orElseThrow();
        Path file = dir.resolve("locks.db");
        try (ReadOnly ignored = ReadOnly.make(file, dir)) {
            Result list = baton(args(Backend.SQLITE, "list"));
            assertThat(list.status()).as(list.err()).isZero();
            assertThat(list.out()).containsPattern("(?m)^held .*" + name + "$");

            Result status = baton(args(Backend.SQLITE, "status", name));
            assertThat(status.status()).as(status.err()).isZero();
            assertThat(status.out()).contains("token " + held.fencingToken());

            Result release = baton(args(Backend.SQLITE, "release", name));
            assertThat(release.status()).as(release.err()).isEqualTo(ExitCodes.REFUSED);
            assertThat(release.err()).contains("SQLite file " + file).contains("read-only");
        }
    }

    /**
     * Makes a file and its directory read-only: {@code chattr +i} when running as root (root ignores
     * permission bits), else permission bits; undone on close.
     */
    record ReadOnly(List<Path> paths, boolean root) implements AutoCloseable {
        static ReadOnly make(Path... paths) throws Exception {
            boolean root = "root".equals(System.getProperty("user.name"));
            ReadOnly ro = new ReadOnly(List.of(paths), root);
            for (Path p : paths) {
                if (root) {
                    run("chattr", "+i", p.toString());
                } else {
                    p.toFile().setWritable(false, false);
                }
            }
            for (Path p : paths) {
                assertThat(Files.isWritable(p)).as("%s made read-only", p).isFalse();
            }
            return ro;
        }

        @Override
        public void close() throws Exception {
            for (Path p : paths) {
                if (root) {
                    run("chattr", "-i", p.toString());
                } else {
                    p.toFile().setWritable(true, false);
                }
            }
        }

        private static void run(String... command) throws Exception {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor()).as("%s: %s", String.join(" ", command), output).isZero();
        }
    }

    // ---- messages ----

    @Test
    void unreachableIs69AndSaysSoWithoutThePassword() {
        Result r = baton("list", "--url", "jdbc:postgresql://127.0.0.1:1/test?user=postgres&password=hunter2x");

        assertThat(r.status()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(r.err()).contains("(unreachable)").contains("password=***").doesNotContain("hunter2x");
    }

    @Test
    void unknownPostgresDatabaseIs77AndSaysSo() {
        requireServer(Backend.POSTGRESQL);
        Result r = baton("list", "--url", "jdbc:postgresql://127.0.0.1:5432/no_such_db_x?user=postgres&password=hunter2x");

        assertThat(r.status()).isEqualTo(ExitCodes.REFUSED);
        assertThat(r.err()).contains("refused the connection (unknown database)").doesNotContain("hunter2x");
    }

    @Test
    void unknownPostgresRoleIs77Credentials() {
        requireServer(Backend.POSTGRESQL);
        Result r = baton("status", "x", "--url", "jdbc:postgresql://127.0.0.1:5432/test?user=no_such_role_x");

        assertThat(r.status()).isEqualTo(ExitCodes.REFUSED);
        assertThat(r.err()).contains("refused the connection (credentials)");
    }

    @Test
    void wrongMariaDbCredentialsAre77AndThePasswordIsHidden() {
        requireServer(Backend.MARIADB);
        Result r = baton("list", "--url", "jdbc:mariadb://127.0.0.1:3306/test?user=no_such_user_x&password=hunter2x");

        assertThat(r.status()).isEqualTo(ExitCodes.REFUSED);
        assertThat(r.err()).contains("refused the connection (credentials)").doesNotContain("hunter2x");
    }

    @Test
    void unknownMariaDbDatabaseIs77AndSaysSo() {
        requireServer(Backend.MARIADB);
        Result r = baton("list", "--url", "jdbc:mariadb://127.0.0.1:3306/no_such_db_x?user=root");

        assertThat(r.status()).isEqualTo(ExitCodes.REFUSED);
        assertThat(r.err()).contains("refused the connection (unknown database)");
    }

    @Test
    void aSqliteFileInAMissingDirectoryIsNamed() {
        Path file = dir.resolve("no/such/dir/locks.db");
        Result r = baton("run", "--lock", "x", "--url", "jdbc:sqlite:" + file, "--", "true");

        assertThat(r.status()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(r.err()).contains("SQLite file " + file).contains("does not exist");
    }

    @Test
    void tildeInASqliteUrlIsTheHomeDirectoryForRunAndList() throws Exception {
        Path home = DatabaseOptions.home();
        String file = ".baton-cli-it-" + UUID.randomUUID() + ".db";
        try {
            Result run = baton("run", "--lock", "tilde", "--url", "jdbc:sqlite:~/" + file, "--", "true");
            assertThat(run.status()).as(run.err()).isZero();
            assertThat(home.resolve(file)).exists();
            Result list = baton("list", "--url", "jdbc:sqlite:~/" + file);
            assertThat(list.status()).as(list.err()).isZero();
            assertThat(list.out()).contains("tilde");
        } finally {
            for (String suffix : List.of("", "-wal", "-shm")) {
                Files.deleteIfExists(home.resolve(file + suffix));
            }
        }
    }
}
