package dev.baton.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.Lease;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sqlite.SQLiteDataSource;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The line of waiters as operators see and clear it ({@code status}, {@code list}, {@code release --waiter}) on
 * the lease strategy's tables of SQLite, PostgreSQL and MariaDB, in process, while lock clients of the library hold
 * and wait in the same table. A place is a row of {@code <table>_queue}; a test that needs a place that neither
 * dies nor takes the lock (a waiter whose client is alive but stalled) writes that row itself.
 */
class BatonLineIT {
    enum Backend {
        SQLITE, POSTGRESQL, MARIADB
    }

    @TempDir
    Path dir;

    private final String table = "cli_line_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final List<AutoCloseable> clients = new ArrayList<>();
    private HikariDataSource pool;
    private DataSource dataSource;

    private String url(Backend backend) {
        return switch (backend) {
            case SQLITE -> "jdbc:sqlite:" + dir.resolve("locks.db");
            case POSTGRESQL -> BatonAdminIT.PG;
            case MARIADB -> BatonAdminIT.MARIADB;
        };
    }

    private String[] args(Backend backend, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--url", url(backend), "--table", table));
        return all.toArray(String[]::new);
    }

    private DataSource dataSource(Backend backend) {
        if (dataSource == null) {
            switch (backend) {
                case POSTGRESQL -> TestServers.require("PostgreSQL", "127.0.0.1", 5432);
                case MARIADB -> TestServers.require("MariaDB", "127.0.0.1", 3306);
                default -> {
                }
            }
            if (backend == Backend.SQLITE) {
                SQLiteDataSource ds = new SQLiteDataSource();
                ds.setUrl(url(backend));
                dataSource = ds;
            } else {
                HikariConfig config = new HikariConfig();
                config.setJdbcUrl(url(backend));
                config.setMaximumPoolSize(6);
                pool = new HikariDataSource(config);
                dataSource = pool;
            }
        }
        return dataSource;
    }

    private JdbcLockClient client(Backend backend) {
        JdbcLockClient client = JdbcLocks.builder(dataSource(backend)).createTableIfMissing().tableName(table)
                .leaseTime(Duration.ofSeconds(30)).build();
        clients.add(0, client);
        return client;
    }

    @AfterEach
    void closeAndDrop() throws Exception {
        for (AutoCloseable c : clients) {
            c.close();
        }
        if (pool != null) {
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                for (String t : List.of(table, table + "_rw", table + "_names", table + "_token", table + "_queue",
                        table + "_released")) {
                    st.execute("DROP TABLE IF EXISTS " + t);
                }
                st.execute(pool.getJdbcUrl().startsWith("jdbc:postgresql") ? "DROP SEQUENCE IF EXISTS " + table
                        + "_token_seq" : "SELECT 1");
            } finally {
                pool.close();
            }
        }
    }

    private static String lock(String what) {
        return "cli-line-" + what + "-" + UUID.randomUUID();
    }

    /** The owners of the places in the line of {@code name}, in the line's order, read from the table. */
    private List<String> line(String name) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT owner FROM " + table + "_queue WHERE name = ?"
                     + " ORDER BY enqueued_at, owner")) {
            ps.setString(1, name);
            List<String> owners = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    owners.add(rs.getString(1));
                }
            }
            return owners;
        }
    }

    /**
     * Writes a place in the line of {@code name} for {@code owner} that was taken {@code sinceSeconds} ago and lives
     * until {@code untilSeconds} from now (negative: it died that long ago), by the database's clock.
     */
    private void place(Backend backend, String name, String owner, int sinceSeconds, int untilSeconds)
            throws SQLException {
        String values = switch (backend) {
            case POSTGRESQL -> "now() - make_interval(secs => ?), now() + make_interval(secs => ?)";
            case MARIADB -> "UTC_TIMESTAMP(6) - INTERVAL ? SECOND, UTC_TIMESTAMP(6) + INTERVAL ? SECOND";
            // the SQLite file is on this machine: its clock is this one's
            case SQLITE -> "? , ?";
        };
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + "_queue (name, owner, enqueued_at,"
                     + " expires_at) VALUES (?, ?, " + values + ")")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            if (backend == Backend.SQLITE) {
                long now = System.currentTimeMillis();
                ps.setLong(3, now - sinceSeconds * 1000L);
                ps.setLong(4, now + untilSeconds * 1000L);
            } else {
                ps.setInt(3, sinceSeconds);
                ps.setInt(4, untilSeconds);
            }
            ps.executeUpdate();
        }
    }

    private static JsonNode entry(String json, String name) throws Exception {
        for (JsonNode n : new ObjectMapper().readTree(json)) {
            if (n.get("name").asText().equals(name)) {
                return n;
            }
        }
        throw new AssertionError("'" + name + "' not listed: " + json);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void statusAndListShowTheHolderAndItsWaiterAndReleaseWaiterRemovesThePlace(Backend backend) throws Exception {
        JdbcLockClient holder = client(backend);
        JdbcLockClient waiterClient = client(backend);
        String name = lock("waiter");
        Lease held = holder.lock(name).tryAcquire().orElseThrow();
        CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
            try (Lease l = waiterClient.lock(name).acquire(Duration.ofSeconds(60))) {
                return l.fencingToken();
            }
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> line(name).size() == 1);
        String waiter = line(name).get(0);
        assertThat(waiter).startsWith(waiterClient.clientId() + "#");

        BatonAdminIT.Result status = baton(args(backend, "status", name));
        assertThat(status.status()).as(status.err()).isZero();
        List<String> lines = status.out().lines().toList();
        assertThat(lines).as(status.out()).hasSize(2);
        assertThat(lines.get(0)).contains("is held by " + held.holderId());
        assertThat(lines.get(1)).startsWith("  1. " + waiter + " waiting since 20").contains(", alive until 20");

        BatonAdminIT.Result text = baton(args(backend, "list"));
        assertThat(text.status()).as(text.err()).isZero();
        assertThat(text.out()).contains("  1. " + waiter + " waiting since ");

        BatonAdminIT.Result json = baton(args(backend, "list", "--json"));
        assertThat(json.status()).as(json.err()).isZero();
        JsonNode e = entry(json.out(), name);
        assertThat(e.get("state").asText()).isEqualTo("held");
        assertThat(e.get("holder").asText()).isEqualTo(held.holderId());
        assertThat(e.get("keptFor").isNull()).isTrue();
        assertThat(e.get("line")).as(json.out()).hasSize(1);
        assertThat(e.get("line").get(0).get("owner").asText()).isEqualTo(waiter);
        assertThat(e.get("line").get(0).get("alive").asBoolean()).isTrue();
        assertThat(e.get("line").get(0).get("since").asText()).startsWith("20");
        assertThat(e.get("line").get(0).get("aliveUntil").asText()).startsWith("20");

        BatonAdminIT.Result removed = baton(args(backend, "release", name, "--waiter", waiter));
        assertThat(removed.status()).as(removed.err()).isZero();
        assertThat(removed.out()).startsWith("removed " + waiter + "'s place in the line of lock '" + name + "'");
        assertThat(held.isValid()).as("the holder is not touched").isTrue();

        // a live waiter keeps waiting: it takes a new place and gets the lock once the holder lets go
        held.close();
        assertThat(waiting.get(30, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aFreeLockKeptForTheHeadOfItsLineSaysSoEverywhereAndReleaseWaiterFreesIt(Backend backend) throws Exception {
        JdbcLockClient locks = client(backend);
        JdbcLockClient other = client(backend);
        String name = lock("kept");
        long last;
        try (Lease l = locks.lock(name).tryAcquire().orElseThrow()) {
            last = l.fencingToken();
        }
        String dead = "dead-host/1/abc#1";
        String stalled = "stalled-host/2/def#7";
        place(backend, name, dead, 20, -5);   // its waiter died 5 s ago: counts for nothing
        place(backend, name, stalled, 10, 300); // alive (its client's heartbeat runs), first live: the head
        assertThat(other.lock(name).tryAcquire()).as("a free lock kept for the head of its line").isEmpty();

        BatonAdminIT.Result status = baton(args(backend, "status", name));
        assertThat(status.status()).as(status.out() + status.err()).isEqualTo(ExitCodes.KEPT_FOR_WAITER);
        List<String> lines = status.out().lines().toList();
        assertThat(lines).as(status.out()).hasSize(3);
        assertThat(lines.get(0)).startsWith("lock '" + name + "' is free, kept for the head of its line: " + stalled
                + " (last grant: token " + last + ", ended 20");
        assertThat(lines.get(1)).startsWith("  1. " + dead + " waiting since 20").contains(", dead since 20");
        assertThat(lines.get(2)).startsWith("  2. " + stalled + " waiting since 20").contains(", alive until 20");

        JsonNode e = entry(baton(args(backend, "list", "--json")).out(), name);
        assertThat(e.get("state").asText()).isEqualTo("kept");
        assertThat(e.get("keptFor").asText()).isEqualTo(stalled);
        assertThat(e.get("line").get(0).get("alive").asBoolean()).isFalse();
        assertThat(e.get("line").get(1).get("alive").asBoolean()).isTrue();
        assertThat(baton(args(backend, "list")).out()).containsPattern("(?m)^kept +" + last + " ");

        BatonAdminIT.Result run = baton("run", "--lock", name, "--wait", "0", "--url", url(backend), "--table", table, "--",
                "true");
        assertThat(run.status()).isEqualTo(ExitCodes.NOT_ACQUIRED);
        assertThat(run.err()).contains("free, kept for the head of its line: " + stalled);

        BatonAdminIT.Result release = baton(args(backend, "release", name));
        assertThat(release.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(release.err()).contains("is free, kept for the head of its line: " + stalled)
                .contains("nothing released").contains("--waiter " + stalled);

        BatonAdminIT.Result removed = baton(args(backend, "release", name, "--waiter", stalled));
        assertThat(removed.status()).as(removed.err()).isZero();
        assertThat(removed.out()).startsWith("removed " + stalled + "'s place in the line of lock '" + name
                + "' (waiting since 20").contains("alive until 20");
        BatonAdminIT.Result again = baton(args(backend, "release", name, "--waiter", stalled));
        assertThat(again.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(again.err()).contains(stalled + " has no place in the line of lock '" + name + "' (in line: "
                + dead + "): nothing removed");
        BatonAdminIT.Result deadRemoved = baton(args(backend, "release", name, "--waiter", dead));
        assertThat(deadRemoved.status()).as(deadRemoved.err()).isZero();
        assertThat(deadRemoved.out()).contains("dead since 20");

        assertThat(baton(args(backend, "status", name)).status()).isEqualTo(ExitCodes.NOT_HELD);
        try (Lease next = other.lock(name).tryAcquire().orElseThrow()) {
            assertThat(next.fencingToken()).isGreaterThan(last);
        }
    }
}
