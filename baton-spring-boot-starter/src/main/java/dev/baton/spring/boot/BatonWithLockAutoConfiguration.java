package dev.baton.spring.boot;

import dev.baton.LockClient;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * Runs {@link WithLock} methods under their locks, with the application's one {@link LockClient} (the one
 * {@link BatonAutoConfiguration} builds, or the application's own; for a method with a {@link WithLock#leaseTime()}
 * of its own, a client the starter builds for that lease time). Not turned off by {@code baton.enabled=false}:
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
                                                       ObjectProvider<BatonClients> starterClients,
                                                       ObjectProvider<BatonProperties> properties,
                                                       Environment environment, BeanFactory beanFactory) {
        WithLockInterceptor interceptor = new WithLockInterceptor(method -> {
            LockClient c = client.getIfUnique();
            if (c == null) {
                throw new IllegalStateException(missingClient(method, beanFactory, environment));
            }
            return c;
        }, (main, leaseTime, method) -> leaseClient(main, leaseTime, method, starterClients),
                () -> properties.getObject().getDefaultWait(), beanFactory);
        DefaultPointcutAdvisor advisor = new StartupCheckingAdvisor(interceptor, client, starterClients, beanFactory);
        advisor.setOrder(0);
        return advisor;
    }

    /**
     * The advisor, which also checks at start-up, once every singleton is built, the {@link WithLock} methods of the
     * context's singletons that set a {@link WithLock#leaseTime() leaseTime}: their annotation, and that their
     * locks can have that lease time (building the client for it). A refusal stops the start; methods of beans
     * created later (lazy, prototypes) are checked when first called, as are all others.
     */
    private static final class StartupCheckingAdvisor extends DefaultPointcutAdvisor
            implements SmartInitializingSingleton {
        private final transient WithLockInterceptor interceptor;
        private final transient ObjectProvider<LockClient> client;
        private final transient ObjectProvider<BatonClients> starterClients;
        private final transient BeanFactory beanFactory;

        StartupCheckingAdvisor(WithLockInterceptor interceptor, ObjectProvider<LockClient> client,
                               ObjectProvider<BatonClients> starterClients, BeanFactory beanFactory) {
            super(AnnotationMatchingPointcut.forMethodAnnotation(WithLock.class), interceptor);
            this.interceptor = interceptor;
            this.client = client;
            this.starterClients = starterClients;
            this.beanFactory = beanFactory;
        }

        @Override
        public void afterSingletonsInstantiated() {
            if (!(beanFactory instanceof ConfigurableListableBeanFactory beans)) {
                return;
            }
            Set<Class<?>> seen = new HashSet<>();
            for (String name : beans.getBeanNamesForType(Object.class, false, false)) {
                if (!beans.containsSingleton(name)) {
                    continue; // lazy: checked at its first call
                }
                Class<?> type = AopProxyUtils.ultimateTargetClass(beans.getSingleton(name));
                if (!AnnotationUtils.isCandidateClass(type, WithLock.class) || !seen.add(type)) {
                    continue;
                }
                Method[] methods;
                try {
                    methods = ReflectionUtils.getUniqueDeclaredMethods(type);
                } catch (LinkageError | RuntimeException unresolvable) {
                    // a method signature names a class that is absent: as Spring's own method introspection does,
                    // skip the class (a @WithLock method of it is checked at its first call)
                    continue;
                }
                for (Method method : methods) {
                    WithLock a = method.getAnnotation(WithLock.class);
                    if (a == null || a.leaseTime().isBlank() || !Modifier.isPublic(method.getModifiers())) {
                        continue;
                    }
                    Duration leaseTime = interceptor.leaseTimeOf(method);
                    LockClient main = client.getIfUnique();
                    if (main != null) {
                        leaseClient(main, leaseTime, WithLockInterceptor.where(method), starterClients);
                    }
                }
            }
        }
    }

    /** The client for a method's own lease time: one the starter builds beside its own. */
    private static LockClient leaseClient(LockClient main, Duration leaseTime, String method,
                                          ObjectProvider<BatonClients> starterClients) {
        BatonClients clients = starterClients.getIfUnique();
        if (clients == null || !clients.isMain(main)) {
            throw new IllegalStateException(method + " sets leaseTime = " + leaseTime + ", but its LockClient"
                    + " bean is the application's own, and only a client the starter builds can be built again"
                    + " with another lease time; remove leaseTime from the annotation (the method then runs under"
                    + " that client's lease time), or let the starter build the client");
        }
        return clients.forLease(leaseTime, method);
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
