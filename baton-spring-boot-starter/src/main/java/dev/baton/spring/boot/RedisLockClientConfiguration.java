package dev.baton.spring.boot;

import dev.baton.LockClient;
import dev.baton.LockConfigurationException;
import dev.baton.LockObserver;
import dev.baton.redis.RedisLockClient;
import dev.baton.redis.RedisLocks;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis lock client: over {@code baton.redis.url}, else the application's Lettuce {@link RedisClient}, else its
 * Spring Data {@code LettuceConnectionFactory}'s client.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedisLocks.class, RedisClient.class})
@Conditional({BatonAutoConfiguration.Backend.Redis.class, RedisLockClientConfiguration.Source.class})
class RedisLockClientConfiguration {
    /** Declared before {@link #batonLockClient}, which it builds: both only where the application has no client. */
    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    BatonClients batonClients(BatonProperties p, ObjectProvider<RedisClient> clients,
                              ObjectProvider<LockObserver> observers, BeanFactory beans) {
        BatonProperties.Redis redis = p.getRedis();
        return BatonClients.of(leaseTime -> {
            RedisLocks.Builder b;
            if (redis.getUrl() != null && !redis.getUrl().isBlank()) {
                b = RedisLocks.builder(redis.getUrl());
            } else if (clients.getIfUnique() != null) {
                b = RedisLocks.builder(clients.getIfUnique());
            } else if (ClassUtils.isPresent(LETTUCE_FACTORY, RedisLockClientConfiguration.class.getClassLoader())) {
                b = RedisLocks.builder(SpringDataRedis.client(beans));
            } else {
                throw new LockConfigurationException(SpringDataRedis.NEEDS + "; found none");
            }
            BatonAutoConfiguration.common(b, p, observers, leaseTime);
            if (redis.getKeyPrefix() != null) {
                b.keyPrefix(redis.getKeyPrefix());
            }
            if (redis.isAllowEviction()) {
                b.allowEviction();
            }
            return b.build();
        }, p.getLeaseTime());
    }

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    RedisLockClient batonLockClient(BatonClients clients) {
        return (RedisLockClient) clients.main();
    }

    private static final String LETTUCE_FACTORY =
            "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory";

    /** Loaded only when Spring Data Redis is present. */
    static final class SpringDataRedis {
        static final String NEEDS = "a Redis lock client needs baton.redis.url, one Lettuce RedisClient bean or"
                + " one LettuceConnectionFactory on a standalone or Sentinel Redis";

        static RedisClient client(BeanFactory beans) {
            LettuceConnectionFactory factory = beans.getBeanProvider(LettuceConnectionFactory.class).getIfUnique();
            AbstractRedisClient client = factory == null ? null : factory.getNativeClient();
            if (client instanceof RedisClient redis) {
                return redis;
            }
            throw new LockConfigurationException(NEEDS + "; found " + (factory == null ? "none"
                    : "a LettuceConnectionFactory whose client is " + (client == null ? "not started"
                    : client.getClass().getSimpleName() + " (Redis Cluster is not supported)")));
        }
    }

    /** Something to build a Redis client from. */
    static class Source extends AnyNestedCondition {
        Source() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(prefix = "baton.redis", name = "url")
        static class Url {
        }

        @ConditionalOnBean(RedisClient.class)
        static class Client {
        }

        @ConditionalOnClass(name = "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory")
        @ConditionalOnBean(type = "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory")
        static class Factory {
        }
    }
}
