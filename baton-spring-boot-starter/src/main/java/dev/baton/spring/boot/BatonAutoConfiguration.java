package dev.baton.spring.boot;

import dev.baton.LockClient;
import dev.baton.LockObserver;
import dev.baton.micrometer.BatonMetrics;
import dev.baton.spi.AbstractClientBuilder;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.Locale;

/**
 * Auto-configures one Baton {@link LockClient} (unless the application defines one), from the first of these that
 * {@code baton.backend} allows ({@code auto}: in this order):
 * <ol>
 *   <li>JDBC: the application's one {@link DataSource};</li>
 *   <li>Redis: {@code baton.redis.url}, else the application's Lettuce {@link RedisClient}, else its Spring Data
 *       {@link LettuceConnectionFactory}'s client;</li>
 *   <li>ZooKeeper: {@code baton.zookeeper.connect-string}, else the application's {@link CuratorFramework}.</li>
 * </ol>
 * Also: {@link BatonMetrics} when there is a {@link MeterRegistry} (and an {@link ObservationRegistry}, for
 * tracing), and every {@link LockObserver} bean as the client's observer. {@code baton.enabled=false} turns all this
 * off; {@link WithLock} methods ({@link BatonWithLockAutoConfiguration}) still run under the application's own
 * {@link LockClient}.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration"})
@ConditionalOnProperty(prefix = "baton", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(BatonProperties.class)
@Import({JdbcLockClientConfiguration.class, RedisLockClientConfiguration.class,
        ZooKeeperLockClientConfiguration.class})
public class BatonAutoConfiguration {

    /** The settings every backend shares, and the observers. */
    static <B extends AbstractClientBuilder<B>> B common(B builder, BatonProperties p,
                                                         ObjectProvider<LockObserver> observers) {
        return common(builder, p, observers, null);
    }

    /**
     * The settings every backend shares, and the observers; with {@code leaseTime} (a {@link WithLock#leaseTime()})
     * instead of {@code baton.lease-time} if not null. Such a client renews every third of its lease time, or every
     * {@code baton.renew-interval} if that is shorter.
     */
    static <B extends AbstractClientBuilder<B>> B common(B builder, BatonProperties p,
                                                         ObjectProvider<LockObserver> observers, Duration leaseTime) {
        if (leaseTime != null) {
            builder.leaseTime(leaseTime);
            Duration third = leaseTime.dividedBy(3);
            Duration configured = p.getRenewInterval();
            builder.renewInterval(configured != null && configured.compareTo(third) < 0 ? configured : third);
        } else {
            if (p.getLeaseTime() != null) {
                builder.leaseTime(p.getLeaseTime());
            }
            if (p.getRenewInterval() != null) {
                builder.renewInterval(p.getRenewInterval());
            }
        }
        if (p.getClientIdPrefix() != null) {
            builder.clientIdPrefix(p.getClientIdPrefix());
        }
        LockObserver observer = CompositeObserver.of(observers.orderedStream().toList());
        if (observer != LockObserver.NONE) {
            builder.observer(observer);
        }
        return builder;
    }

    /** The baton.* meters in the application's MeterRegistry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({MeterRegistry.class, BatonMetrics.class})
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnProperty(prefix = "baton.metrics", name = "enabled", havingValue = "true", matchIfMissing = true)
    static class MetricsConfiguration {
        @Bean
        @ConditionalOnMissingBean(BatonMetrics.class)
        BatonMetrics batonMetrics(MeterRegistry registry, ObjectProvider<ObservationRegistry> observations,
                                  BatonProperties p) {
            BatonMetrics.Builder b = BatonMetrics.builder(registry).maxLockNames(p.getMetrics().getMaxLockNames());
            ObservationRegistry o = observations.getIfUnique();
            if (o != null) {
                b.observationRegistry(o);
            }
            return b.build();
        }
    }

    /** Whether {@code baton.backend} allows a backend: it names it, or is {@code auto} (the default). */
    abstract static class Backend extends SpringBootCondition {
        private final BatonProperties.Backend backend;

        Backend(BatonProperties.Backend backend) {
            this.backend = backend;
        }

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String value = context.getEnvironment().getProperty("baton.backend", "auto").trim();
            BatonProperties.Backend chosen;
            try {
                chosen = BatonProperties.Backend.valueOf(value.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("baton.backend is '" + value + "'; use auto (the default), jdbc, redis"
                        + " or zookeeper");
            }
            return chosen == BatonProperties.Backend.AUTO || chosen == backend
                    ? ConditionOutcome.match("baton.backend is " + value)
                    : ConditionOutcome.noMatch("baton.backend is " + value);
        }

        static class Jdbc extends Backend {
            Jdbc() {
                super(BatonProperties.Backend.JDBC);
            }
        }

        static class Redis extends Backend {
            Redis() {
                super(BatonProperties.Backend.REDIS);
            }
        }

        static class ZooKeeper extends Backend {
            ZooKeeper() {
                super(BatonProperties.Backend.ZOOKEEPER);
            }
        }
    }
}
