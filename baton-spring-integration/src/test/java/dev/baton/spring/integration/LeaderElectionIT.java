package dev.baton.spring.integration;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.LockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three Spring contexts ("nodes"), each with its own pool, Baton client, {@link BatonLockRegistry} and
 * {@link LockRegistryLeaderInitiator} on PostgreSQL: exactly one is elected; when the leader's node dies abruptly
 * (its pool is closed under it, so nothing is released and renewal fails) another is elected within one lease, with
 * a greater fencing token.
 */
class LeaderElectionIT {
    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    private static final String TABLE = "si_leader_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private static final String ROLE = "leader-" + UUID.randomUUID();

    /** One node: its pool, its client, its context, and what its candidate saw. */
    static final class Node implements AutoCloseable {
        final String id;
        final HikariDataSource pool;
        final LockClient client;
        final BatonLockRegistry registry;
        final GenericApplicationContext context = new GenericApplicationContext();
        final List<Long> grantedTokens = new CopyOnWriteArrayList<>();
        volatile boolean leader;

        Node(String id) {
            this.id = id;
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(URL + "&socketTimeout=2&connectTimeout=2");
            config.setMaximumPoolSize(4);
            config.setConnectionTimeout(1000);
            this.pool = new HikariDataSource(config);
            this.client = JdbcLocks.builder(pool).tableName(TABLE).createTableIfMissing().leaseTime(LEASE).build();
            this.registry = new BatonLockRegistry(client);
            DefaultCandidate candidate = new DefaultCandidate(id, ROLE) {
                @Override
                public void onGranted(Context ctx) {
                    grantedTokens.add(registry.fencingToken(ROLE).orElseThrow());
                    leader = true;
                }

                @Override
                public void onRevoked(Context ctx) {
                    leader = false;
                }
            };
            context.registerBean(BatonLockRegistry.class, () -> registry);
            context.registerBean(LockRegistryLeaderInitiator.class, () -> {
                LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, candidate);
                initiator.setHeartBeatMillis(200);
                initiator.setBusyWaitMillis(50);
                return initiator;
            });
            context.refresh();
        }

        /** Like kill -9 as the database sees it: the connections go away, nothing is released. */
        void kill() {
            pool.close();
        }

        @Override
        public void close() {
            context.close();
            client.close();
            pool.close();
        }
    }

    @BeforeAll
    static void requireServer() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
    }

    @AfterAll
    static void dropTable() throws SQLException {
        try (Connection c = java.sql.DriverManager.getConnection(URL); Statement st = c.createStatement()) {
            for (String suffix : new String[] {"", "_rw", "_queue", "_released", "_names"}) {
                st.execute("DROP TABLE IF EXISTS " + TABLE + suffix);
            }
            st.execute("DROP SEQUENCE IF EXISTS " + TABLE + "_token_seq");
        }
    }

    @Test
    void threeNodesElectOneLeaderAndAnotherWithinOneLeaseAfterItDies() {
        List<Node> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                nodes.add(new Node("node-" + i));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> nodes.stream().filter(n -> n.leader).count() == 1);
            // a few heartbeats later, still exactly one, and only one node was ever granted
            await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(2))
                    .until(() -> nodes.stream().filter(n -> n.leader).count() == 1);
            assertThat(nodes.stream().mapToInt(n -> n.grantedTokens.size()).sum()).isEqualTo(1);
            Node first = nodes.stream().filter(n -> n.leader).findFirst().orElseThrow();
            long firstToken = first.grantedTokens.get(0);

            long killedAt = System.nanoTime();
            first.kill();
            List<Node> survivors = nodes.stream().filter(n -> n != first).toList();
            await().atMost(LEASE.plusMillis(500)).pollInterval(Duration.ofMillis(10))
                    .until(() -> survivors.stream().anyMatch(n -> n.leader));
            Duration reelected = Duration.ofNanos(System.nanoTime() - killedAt);
            System.out.println("re-elected " + reelected.toMillis() + " ms after the leader died (lease " + LEASE.toMillis()
                    + " ms)");
            assertThat(survivors.stream().filter(n -> n.leader).count()).isEqualTo(1);
            Node second = survivors.stream().filter(n -> n.leader).findFirst().orElseThrow();
            assertThat(second.grantedTokens).hasSize(1);
            assertThat(second.grantedTokens.get(0)).as("a new term, a greater token").isGreaterThan(firstToken);
            // the dead node's own initiator learns it lost the lease and steps down
            await().atMost(LEASE.multipliedBy(3)).until(() -> !first.leader);
        } finally {
            nodes.forEach(Node::close);
        }
    }
}
