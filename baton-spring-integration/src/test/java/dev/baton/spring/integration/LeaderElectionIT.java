package dev.baton.spring.integration;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.LockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.AfterAll;
import io.lettuce.core.RedisClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import dev.baton.redis.RedisLocks;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
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
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three Spring contexts ("nodes"), each with its own pool, Baton client, {@link BatonLockRegistry} and
 * {@link LockRegistryLeaderInitiator}, on PostgreSQL and on Redis: exactly one is elected; when the leader's node dies
 * abruptly (its connections are closed under it, so nothing is released and renewal fails) another is elected within
 * one lease time (plus the waiters' next try), with a greater fencing token.
 */
class LeaderElectionIT {
    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    private static final String TABLE = "si_leader_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private static final String ROLE = "leader-" + UUID.randomUUID();

    /** How a node reaches its server, and how it dies. */
    interface Server {
        /** A new Baton client on its own connections. */
        LockClient connect();

        /** Like kill -9 as the server sees it: the connections go away, nothing is released. */
        void kill();

        /** Closes what connect() opened and kill() did not. */
        void close();
    }

    static Server postgres() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        return new Server() {
            HikariDataSource pool;

            @Override
            public LockClient connect() {
                HikariConfig config = new HikariConfig();
                config.setJdbcUrl(URL + "&socketTimeout=2&connectTimeout=2");
                config.setMaximumPoolSize(4);
                config.setConnectionTimeout(1000);
                pool = new HikariDataSource(config);
                return JdbcLocks.builder(pool).tableName(TABLE).createTableIfMissing().leaseTime(LEASE).build();
            }

            @Override
            public void kill() {
                pool.close();
            }

            @Override
            public void close() {
                pool.close();
            }

            @Override
            public String toString() {
                return "PostgreSQL";
            }
        };
    }

    /** Netty's event loops, shared by the nodes' Redis clients (each still has its own connections). */
    private static ClientResources resources;

    private static synchronized ClientResources redisResources() {
        if (resources == null) {
            resources = DefaultClientResources.create();
        }
        return resources;
    }

    static Server redis() {
        TestServers.requireRedis();
        return new Server() {
            RedisClient redis;

            @Override
            public LockClient connect() {
                redis = RedisClient.create(redisResources(), "redis://127.0.0.1:6379");
                return RedisLocks.builder(redis).keyPrefix(TABLE + ":").tokenCounterExpiry(Duration.ofHours(1))
                        .leaseTime(LEASE).build();
            }

            @Override
            public void kill() {
                redis.shutdown(Duration.ZERO, Duration.ZERO);
            }

            @Override
            public void close() {
                redis.shutdown(Duration.ZERO, Duration.ZERO);
            }

            @Override
            public String toString() {
                return "Redis";
            }
        };
    }

    static Stream<Supplier<Server>> servers() {
        return Stream.of(named("PostgreSQL", LeaderElectionIT::postgres), named("Redis", LeaderElectionIT::redis));
    }

    private static Supplier<Server> named(String name, Supplier<Server> server) {
        return new Supplier<>() {
            @Override
            public Server get() {
                return server.get();
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    /** One node: its connections, its client, its context, and what its candidate saw. */
    static final class Node implements AutoCloseable {
        final String id;
        final Server server;
        final LockClient client;
        final BatonLockRegistry registry;
        final GenericApplicationContext context = new GenericApplicationContext();
        final List<Long> grantedTokens = new CopyOnWriteArrayList<>();
        volatile boolean leader;

        Node(String id, Server server) {
            this.id = id;
            this.server = server;
            this.client = server.connect();
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

        void kill() {
            server.kill();
        }

        @Override
        public void close() {
            try {
                context.close();
                client.close();
            } catch (RuntimeException e) {
                System.out.println(id + " closed after its death: " + e);
            } finally {
                server.close();
            }
        }
    }

    @AfterAll
    static void dropTable() throws SQLException {
        if (resources != null) {
            resources.shutdown();
        }
        try (Connection c = java.sql.DriverManager.getConnection(URL); Statement st = c.createStatement()) {
            for (String suffix : new String[] {"", "_rw", "_queue", "_released", "_names"}) {
                st.execute("DROP TABLE IF EXISTS " + TABLE + suffix);
            }
            st.execute("DROP SEQUENCE IF EXISTS " + TABLE + "_token_seq");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void threeNodesElectOneLeaderAndAnotherWithinOneLeaseAfterItDies(Supplier<Server> server) {
        List<Node> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                nodes.add(new Node("node-" + i, server.get()));
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
            // the server frees the dead leader's lease within LEASE of its death and the survivors keep trying (50 ms
            // apart); the 2.5 s beyond that are for a busy machine's scheduling, not part of the mechanism's bound
            await().atMost(LEASE.plusMillis(2500)).pollInterval(Duration.ofMillis(10))
                    .until(() -> survivors.stream().anyMatch(n -> n.leader));
            Duration reelected = Duration.ofNanos(System.nanoTime() - killedAt);
            System.out.println(server + ": re-elected " + reelected.toMillis() + " ms after the leader died (lease "
                    + LEASE.toMillis() + " ms)");
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
