package dev.baton.jdbc.lease;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.testkit.ClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The PostgreSQL LISTEN connection: one per client, and it comes back after its session is killed. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresNotificationIT {
    private final PostgresFixture fixture = new PostgresFixture();

    @AfterAll
    void close() {
        fixture.close();
    }

    /**
     * Server pids of the sessions of {@code clients} that are LISTENing on the channel now: only theirs, as every
     * other client of the contract table (another test class, another run) listens on the same channel.
     */
    private java.util.Set<Integer> listenerPids(String channel, LockClient... clients) throws Exception {
        java.util.Set<Integer> pids = new java.util.HashSet<>();
        List<Long> own = new ArrayList<>();
        for (LockClient client : clients) {
            own.addAll(fixture.sessionIds(client));
        }
        try (Connection c = fixture.admin(); PreparedStatement ps = c.prepareStatement(
                "SELECT pid FROM pg_stat_activity WHERE query = ? AND pid = ANY (?)")) {
            ps.setString(1, "LISTEN " + channel);
            ps.setArray(2, c.createArrayOf("int4", own.stream().map(Long::intValue).toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    pids.add(rs.getInt(1));
                }
            }
        }
        return pids;
    }

    @Test
    void theListenerReconnectsAfterItsSessionIsKilledAndWakesWaitersAgain() throws Exception {
        // long lease and long poll cap: only a notification can wake the waiter within the bound below
        ClientConfig slow = new ClientConfig(Duration.ofSeconds(60), Duration.ofSeconds(30));
        String name = "reconnect-" + System.nanoTime();
        try (LockClient holder = fixture.newClient(slow); LockClient waiter = fixture.newClient(slow)) {
            String channel = "baton_contract_released";
            java.util.Set<Integer> before = listenerPids(channel, holder, waiter);
            assertThat(before).as("one LISTEN session per client").hasSizeGreaterThanOrEqualTo(2);
            fixture.killServerSessions(waiter);
            // the listener notices within its 250 ms poll and reconnects after a 100 ms backoff:
            // one LISTEN session ended and a new one took its place
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                java.util.Set<Integer> now = listenerPids(channel, holder, waiter);
                java.util.Set<Integer> gone = new java.util.HashSet<>(before);
                gone.removeAll(now);
                return now.size() == before.size() && gone.size() == 1;
            });
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<Long> acquired = CompletableFuture.supplyAsync(() -> {
                try (Lease l = waiter.lock(name).acquire(Duration.ofSeconds(50))) {
                    return System.nanoTime();
                }
            });
            Thread.sleep(500);
            long released = System.nanoTime();
            held.close();
            long ms = TimeUnit.NANOSECONDS.toMillis(acquired.get(40, TimeUnit.SECONDS) - released);
            System.out.printf("[postgresql] release-to-acquire after the listener reconnected: %d ms%n", ms);
            // the notification's wake-up plus 2.5 s for a busy machine's scheduling and round trips
            assertThat(ms).as("woken by NOTIFY on the re-established LISTEN").isLessThanOrEqualTo(2500);
        }
    }

    /**
     * A release's notice names the earliest waiter in the lock's line, so only that waiter's client wakes it (the
     * others keep their park), and a release with nobody in line sends none: checked on the notices a plain LISTEN
     * session receives, in the order of the line.
     */
    @Test
    void aReleaseNamesTheNextWaiterInLineInItsNotice() throws Exception {
        ClientConfig slow = new ClientConfig(Duration.ofSeconds(60), Duration.ofSeconds(30));
        String name = "turn-" + System.nanoTime();
        String channel = "baton_contract_released";
        try (Connection listen = fixture.admin(); LockClient holder = fixture.newClient(slow);
             LockClient first = fixture.newClient(slow); LockClient second = fixture.newClient(slow)) {
            try (var st = listen.createStatement()) {
                st.execute("LISTEN " + channel);
            }
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<Lease> one = CompletableFuture.supplyAsync(() -> first.lock(name).acquire(Duration.ofSeconds(50)));
            await().atMost(Duration.ofSeconds(10)).until(() -> waiting(name) == 1);
            CompletableFuture<Lease> two = CompletableFuture.supplyAsync(() -> second.lock(name).acquire(Duration.ofSeconds(50)));
            await().atMost(Duration.ofSeconds(10)).until(() -> waiting(name) == 2);
            held.close();
            Lease firstLease = one.get(20, TimeUnit.SECONDS);
            String firstOwner = firstLease.holderId();
            firstLease.close();
            Lease secondLease = two.get(20, TimeUnit.SECONDS);
            String secondOwner = secondLease.holderId();
            secondLease.close();
            String sentinel = "sentinel-" + System.nanoTime();
            try (var st = listen.createStatement()) {
                st.execute("SELECT pg_notify('" + channel + "', '" + sentinel + "')");
            }
            java.util.List<String> notices = new java.util.ArrayList<>();
            org.postgresql.PGConnection pg = listen.unwrap(org.postgresql.PGConnection.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                org.postgresql.PGNotification[] got = pg.getNotifications(100);
                if (got != null) {
                    for (org.postgresql.PGNotification n : got) {
                        if (n.getParameter().endsWith(name) || n.getParameter().equals(sentinel)) {
                            notices.add(n.getParameter());
                        }
                    }
                }
                return notices.contains(sentinel);
            });
            // the last release had nobody in line: no notice (notices arrive in commit order, the sentinel last)
            assertThat(notices).containsExactly(
                    firstOwner.length() + ":" + firstOwner + name,
                    secondOwner.length() + ":" + secondOwner + name,
                    sentinel);
        }
    }

    /** Live tickets in the line of {@code name}. */
    private int waiting(String name) throws Exception {
        try (Connection c = fixture.admin(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM baton_contract_queue WHERE name = ? AND expires_at > now()")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
