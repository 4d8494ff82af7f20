package dev.baton.spring.boot;

import dev.baton.LockClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * The {@code baton} health indicator, with Spring Boot's health support (actuator), for the application's one
 * {@link LockClient} (or its {@code @Primary} one).
 */
@AutoConfiguration(after = BatonAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.AbstractHealthIndicator")
@ConditionalOnSingleCandidate(LockClient.class)
@org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator("baton")
public class BatonHealthAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean(name = "batonHealthIndicator")
    BatonHealthIndicator batonHealthIndicator(LockClient client) {
        return new BatonHealthIndicator(client);
    }
}
