package dev.baton.spring.boot;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockTimeoutException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.micrometer.BatonMetrics;
import dev.baton.redis.RedisLockClient;
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

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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
}
