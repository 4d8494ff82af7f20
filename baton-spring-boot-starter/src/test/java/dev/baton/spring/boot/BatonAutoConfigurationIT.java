package dev.baton.spring.boot;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockTimeoutException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.micrometer.BatonMetrics;
import dev.baton.redis.RedisLockClient;
import io.lettuce.core.RedisClient;
import dev.baton.testkit.TestServers;
import dev.baton.zookeeper.ZooKeeperLockClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import com.zaxxer.hikari.HikariDataSource;
import dev.baton.jdbc.JdbcLocks;

import javax.sql.DataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The auto-configuration in real Spring contexts ({@link ApplicationContextRunner}) against the tests' PostgreSQL,
 * Redis and ZooKeeper.
 */
class BatonAutoConfigurationIT {
    private static final String TABLE = "baton_spring_it";

    private final ApplicationContextRunner postgres = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, BatonAutoConfiguration.class,
                    BatonWithLockAutoConfiguration.class, BatonHealthAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test",
                    "spring.datasource.username=postgres", "baton.jdbc.table=" + TABLE);

    @BeforeAll
    static void serversAreUp() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
    }

    @Test
    void theApplicationsDataSourceGivesAJdbcLockClientWithItsMetersInTheMeterRegistry() {
        postgres.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(JdbcLockClient.class)
                            .hasSingleBean(BatonMetrics.class);
                    LockClient locks = context.getBean(LockClient.class);
                    assertThat(locks.backend()).startsWith("jdbc-lease/postgresql (table " + TABLE);
                    try (Lease lease = locks.lock("spring-meters").acquire(Duration.ofSeconds(5))) {
                        assertThat(lease.fencingToken()).isPositive();
                    }
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get(BatonMetrics.ACQUIRE).tags("backend", "jdbc-lease/postgresql",
                            "lock", "spring-meters", "outcome", "granted").timer().count()).isEqualTo(1);
                    assertThat(registry.get(BatonMetrics.LEASES_HELD).tags("lock", "spring-meters").gauge().value())
                            .isZero();
                });
    }

    @Test
    void aWithLockMethodRunsUnderItsLockWithTheFencingTokenAndOthersThrowOrSkip() {
        postgres.withUserConfiguration(Jobs.class).run(context -> {
            assertThat(context).hasNotFailed();
            Jobs.Service service = context.getBean(Jobs.Service.class);
            LockClient locks = context.getBean(LockClient.class);

            long token = service.tokenOf("a1");
            assertThat(token).isPositive();
            try (Lease after = locks.lock("job-a1").tryAcquire().orElseThrow()) {
                assertThat(after.fencingToken()).as("released when the method returned").isGreaterThan(token);
            }

            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch leave = new CountDownLatch(1);
            CompletableFuture<Long> holder = CompletableFuture.supplyAsync(() -> service.hold("b2", inside, leave));
            assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
            try {
                // other threads, as another instance of the application would
                assertThat(CompletableFuture.supplyAsync(() -> service.skipIfBusy("b2")).get(10, TimeUnit.SECONDS))
                        .as("skipped while busy").isEmpty();
                assertThatThrownBy(() -> CompletableFuture.supplyAsync(() -> service.tokenOf("b2")).join())
                        .hasCauseInstanceOf(LockTimeoutException.class);
            } finally {
                leave.countDown();
            }
            assertThat(holder.get(10, TimeUnit.SECONDS)).isPositive();
            assertThat(service.skipIfBusy("b2")).as("runs once the lock is free").isPresent();
            assertThatThrownBy(CurrentLease::get).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no @WithLock method runs");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Jobs {
        @Bean
        Service service() {
            return new Service();
        }

        static class Service {
            @WithLock("job-#{#id}")
            public long tokenOf(String id) {
                return CurrentLease.get().fencingToken();
            }

            @WithLock(value = "job-#{#p0}", maxWait = "5s")
            public long hold(String id, CountDownLatch inside, CountDownLatch leave) {
                inside.countDown();
                try {
                    leave.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return CurrentLease.get().fencingToken();
            }

            @WithLock(value = "job-#{#id}", onBusy = WithLock.OnBusy.SKIP)
            public Optional<Long> skipIfBusy(String id) {
                return Optional.of(CurrentLease.get().fencingToken());
            }
        }
    }

    @Test
    void theHealthIndicatorIsUpWhileTheBackendAnswers() {
        postgres.run(context -> {
            assertThat(context).hasSingleBean(BatonHealthIndicator.class);
            Health health = context.getBean(BatonHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsKey("locks").containsEntry("backend",
                    context.getBean(LockClient.class).backend());
        });
    }

    @Test
    void bindingSettingsAndTurningItOff() {
        postgres.withPropertyValues("baton.lease-time=3s", "baton.client-id-prefix=spring-it").run(context -> {
            LockClient locks = context.getBean(LockClient.class);
            assertThat(locks.clientId()).startsWith("spring-it/");
        });
        postgres.withPropertyValues("baton.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LockClient.class));
        postgres.withPropertyValues("baton.backend=mongo")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("baton.backend is 'mongo'"));
        postgres.withPropertyValues("baton.jdbc.table=Bad-Name")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("tableName 'Bad-Name' is not allowed"));
    }

    @Test
    void aRedisUrlGivesARedisLockClient() {
        TestServers.requireRedis();
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(BatonAutoConfiguration.class))
                .withPropertyValues("baton.redis.url=redis://127.0.0.1:6379", "baton.redis.key-prefix=baton-spring-it:")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RedisLockClient.class);
                    context.getBean(LockClient.class).lock("spring-redis").tryAcquire().orElseThrow().close();
                });
    }

    @Test
    void springDataRedisGivesARedisLockClient() {
        TestServers.requireRedis();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, BatonAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=redis://127.0.0.1:6379",
                        "baton.redis.key-prefix=baton-spring-it:")
                .run(context -> {
                    assertThat(context).as("from Spring Data Redis's connection factory").hasNotFailed()
                            .hasSingleBean(RedisLockClient.class);
                    context.getBean(LockClient.class).lock("spring-data-redis").tryAcquire().orElseThrow().close();
                });
    }

    @Test
    void aCuratorFrameworkGivesAZooKeeperLockClient() {
        TestServers.requireZooKeeper();
        CuratorFramework curator = CuratorFrameworkFactory.newClient("127.0.0.1:2181", new RetryOneTime(100));
        curator.start();
        try {
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(BatonAutoConfiguration.class))
                    .withBean(CuratorFramework.class, () -> curator)
                    .withPropertyValues("baton.zookeeper.root-path=/baton-spring-it")
                    .run(context -> {
                        assertThat(context).hasNotFailed().hasSingleBean(ZooKeeperLockClient.class);
                        context.getBean(LockClient.class).lock("spring-zk").tryAcquire().orElseThrow().close();
                    });
        } finally {
            curator.close();
        }
    }

    /** Methods with a lease time of their own, and one with the client's, reading their lease on the server. */
    static class Leases {
        private final DataSource dataSource;
        private final LockClient locks;

        Leases(DataSource dataSource, LockClient locks) {
            this.dataSource = dataSource;
            this.locks = locks;
        }

        /** The lease left on the server while the method runs, and whether the starter's own client finds it busy. */
        @WithLock(value = "lease-#{#id}", leaseTime = "2s")
        public Held twoSeconds(String id) {
            return held(id);
        }

        @WithLock("lease-#{#id}")
        public Held clients(String id) {
            return held(id);
        }

        @WithLock(value = "lease-#{#p0}", leaseTime = "2s", maxWait = "10s")
        public long hold(String id, CountDownLatch inside, CountDownLatch leave) throws InterruptedException {
            inside.countDown();
            leave.await(60, TimeUnit.SECONDS);
            return CurrentLease.get().fencingToken();
        }

        private Held held(String id) {
            boolean busy = locks.lock("lease-" + id).tryAcquire().map(other -> {
                other.close();
                return false;
            }).orElse(true);
            return new Held(remaining("lease-" + id), busy, CurrentLease.get().fencingToken());
        }

        /** expires_at minus the database's clock, for the lock's row. */
        private Duration remaining(String name) {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement st = c.prepareStatement("SELECT EXTRACT(EPOCH FROM expires_at - clock_timestamp())"
                         + " * 1000 FROM " + TABLE + " WHERE name = ?")) {
                st.setString(1, name);
                try (ResultSet rs = st.executeQuery()) {
                    assertThat(rs.next()).as("a row for " + name).isTrue();
                    return Duration.ofMillis(rs.getLong(1));
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        record Held(Duration remaining, boolean busyForTheMainClient, long token) {
        }
    }

    @Test
    void aWithLockLeaseTimeIsTheLeaseOnTheServerAndItsLockIsTheMainClientsLock() {
        postgres.withPropertyValues("baton.lease-time=30s").withBean(Leases.class).run(context -> {
            assertThat(context).hasNotFailed();
            Leases leases = context.getBean(Leases.class);
            Leases.Held own = leases.twoSeconds("a");
            assertThat(own.remaining()).as("a 2 s lease on the server, not the client's 30 s")
                    .isLessThanOrEqualTo(Duration.ofSeconds(2));
            assertThat(own.busyForTheMainClient()).as("the main client cannot take the lock meanwhile").isTrue();
            Leases.Held clients = leases.clients("a");
            assertThat(clients.remaining()).as("the client's 30 s lease").isGreaterThan(Duration.ofSeconds(10));
            assertThat(clients.token()).as("one token counter for both clients").isGreaterThan(own.token());
            assertThat(leases.twoSeconds("a").token()).isGreaterThan(clients.token());
        });
    }

    @Test
    void aHolderThatVanishesFreesALockWithALeaseTimeWithinThatLeaseTime() throws Exception {
        AtomicBoolean cut = new AtomicBoolean();
        try (HikariDataSource pool = pool()) {
            DataSource cuttable = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                    new Class<?>[]{DataSource.class}, (proxy, method, args) -> {
                        if (method.getName().equals("getConnection") && cut.get()) {
                            throw new SQLException("cut off by the test");
                        }
                        try {
                            return method.invoke(pool, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch leave = new CountDownLatch(1);
            try {
                postgres.withPropertyValues("baton.lease-time=30s").withBean(DataSource.class, () -> cuttable)
                        .withBean(Leases.class).run(context -> {
                            assertThat(context).hasNotFailed();
                            Leases leases = context.getBean(Leases.class);
                            CompletableFuture.runAsync(() -> {
                                try {
                                    leases.hold("vanishing", inside, leave);
                                } catch (Exception ignored) {
                                    // its release fails, as the holder is cut off
                                }
                            });
                            assertThat(inside.await(20, TimeUnit.SECONDS)).isTrue();
                            cut.set(true); // no renewal, no release reaches the database from here on
                            context.close();
                        });
                try (JdbcLockClient other = JdbcLocks.builder(pool).tableName(TABLE).leaseTime(Duration.ofSeconds(30))
                        .build()) {
                    long start = System.nanoTime();
                    try (Lease lease = other.lock("lease-vanishing").acquire(Duration.ofSeconds(25))) {
                        Duration waited = Duration.ofNanos(System.nanoTime() - start);
                        assertThat(waited).as("freed by the 2 s lease's expiry, long before the client's 30 s")
                                .isLessThan(Duration.ofSeconds(20));
                        assertThat(lease.fencingToken()).isPositive();
                    }
                }
            } finally {
                leave.countDown();
            }
        }
    }

    private static HikariDataSource pool() {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
        pool.setUsername("postgres");
        pool.setMaximumPoolSize(4);
        return pool;
    }

    @Test
    void aLeaseTimeOnZooKeeperOrTheJdbcSessionStrategyStopsTheStartSayingWhy() {
        TestServers.requireZooKeeper();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(BatonAutoConfiguration.class,
                        BatonWithLockAutoConfiguration.class))
                .withPropertyValues("baton.zookeeper.connect-string=127.0.0.1:2181",
                        "baton.zookeeper.root-path=/baton-spring-it")
                .withBean(WithLockTest.TwoSeconds.class)
                .run(context -> assertThat(WithLockTest.refusal(context))
                        .hasMessageContaining("@WithLock on " + WithLockTest.TwoSeconds.class.getName()
                                + ".run sets leaseTime = PT2S, which this backend cannot honour: ZooKeeper holds a"
                                + " lock as long as the client's ZooKeeper session lives"));
        postgres.withPropertyValues("baton.jdbc.strategy=session").withBean(WithLockTest.TwoSeconds.class)
                .run(context -> assertThat(WithLockTest.refusal(context))
                        .hasMessageContaining("which this backend cannot honour: the jdbc session strategy"));
    }

    /** The PTTL of a method's lock key on Redis, read while the method runs. */
    static class RedisLeases {
        static final String PREFIX = "baton-spring-it:";

        @WithLock(value = "redis-lease", leaseTime = "2s")
        public long twoSeconds() {
            return pttl();
        }

        @WithLock("redis-lease")
        public long clients() {
            return pttl();
        }

        private static long pttl() {
            RedisClient redis = RedisClient.create("redis://127.0.0.1:6379");
            try (var connection = redis.connect()) {
                return connection.sync().pttl(PREFIX + "{redis-lease}:x");
            } finally {
                redis.shutdown();
            }
        }
    }

    @Test
    void aWithLockLeaseTimeIsTheKeysTimeToLiveOnRedis() {
        TestServers.requireRedis();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(BatonAutoConfiguration.class,
                        BatonWithLockAutoConfiguration.class))
                .withPropertyValues("baton.redis.url=redis://127.0.0.1:6379",
                        "baton.redis.key-prefix=" + RedisLeases.PREFIX, "baton.lease-time=30s")
                .withBean(RedisLeases.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RedisLeases leases = context.getBean(RedisLeases.class);
                    assertThat(leases.twoSeconds()).as("PTTL in ms: the method's 2 s, not the client's 30 s")
                            .isBetween(1L, 2000L);
                    assertThat(leases.clients()).as("PTTL in ms: the client's 30 s").isGreaterThan(10_000L);
                });
    }
}
