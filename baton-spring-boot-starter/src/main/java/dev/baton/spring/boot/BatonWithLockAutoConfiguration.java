package dev.baton.spring.boot;

import dev.baton.LockClient;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import java.util.Arrays;

/**
 * Runs {@link WithLock} methods under their locks, with the application's one {@link LockClient} (the one
 * {@link BatonAutoConfiguration} builds, or the application's own). Not turned off by {@code baton.enabled=false}:
 * an annotated method never runs unlocked; without a {@link LockClient} it fails when called, saying what is
 * missing.
 */
@AutoConfiguration(after = BatonAutoConfiguration.class)
@EnableConfigurationProperties(BatonProperties.class)
@Import(BatonWithLockAutoConfiguration.AutoProxying.class)
public class BatonWithLockAutoConfiguration {

    /** Runs {@link WithLock} methods under their locks. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static DefaultPointcutAdvisor batonWithLockAdvisor(ObjectProvider<LockClient> client,
                                                       ObjectProvider<BatonProperties> properties,
                                                       Environment environment, BeanFactory beanFactory) {
        WithLockInterceptor interceptor = new WithLockInterceptor(method -> {
            LockClient c = client.getIfUnique();
            if (c == null) {
                throw new IllegalStateException(missingClient(method, beanFactory, environment));
            }
            return c;
        }, () -> properties.getObject().getDefaultWait(), beanFactory);
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
                AnnotationMatchingPointcut.forMethodAnnotation(WithLock.class), interceptor);
        advisor.setOrder(0);
        return advisor;
    }

    private static String missingClient(String method, BeanFactory beanFactory, Environment environment) {
        String[] names = beanFactory instanceof ListableBeanFactory l
                ? l.getBeanNamesForType(LockClient.class) : new String[0];
        String start = method + " needs one LockClient bean, and the application has " + names.length;
        if (names.length > 1) {
            return start + " (" + String.join(", ", Arrays.asList(names)) + ") of which none is @Primary: mark the"
                    + " one for @WithLock methods @Primary";
        }
        if (!environment.getProperty("baton.enabled", Boolean.class, true)) {
            return start + ": baton.enabled is false, so the starter builds none; define a LockClient bean, or"
                    + " remove baton.enabled=false";
        }
        return start + ": give it a DataSource, baton.redis.url or baton.zookeeper.connect-string, or a LockClient"
                + " bean of its own";
    }

    /**
     * Makes sure infrastructure advisors such as {@link #batonWithLockAdvisor} apply, also where Spring Boot's AOP
     * auto-configuration does not run. Whether proxies are class proxies stays as the application sets it
     * ({@code spring.aop.proxy-target-class}, true by default); a bean without interfaces gets one anyway.
     */
    static class AutoProxying implements ImportBeanDefinitionRegistrar {
        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }
    }
}
