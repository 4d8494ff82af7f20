package dev.baton.spring.boot;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockObserver;
import dev.baton.memory.InMemoryLockServer;
import dev.baton.memory.InMemoryLocks;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link WithLock} and the observers over the application's own {@link LockClient} bean (the in-memory backend), so
 * without a server: the auto-configuration backs off and uses it.
 */
class WithLockTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final List<String> seen = new CopyOnWriteArrayList<>();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(BatonAutoConfiguration.class))
                .withBean(LockClient.class, () -> InMemoryLocks.builder(server).build())
                .withUserConfiguration(Methods.class);
    }

    @Configuration(proxyBeanMethods = false)
    static class Methods {
        @Bean
        Service service() {
            return new Service();
        }

        static class Service {
            @WithLock("outer-#{#id}")
            public String nested(int id, Service self) {
                long outer = CurrentLease.get().fencingToken();
                String inner = self.inner();
                return CurrentLease.get().lockName() + ":" + (CurrentLease.get().fencingToken() == outer) + "/" + inner;
            }

            @WithLock("inner")
            public String inner() {
                return CurrentLease.get().lockName();
            }

            @WithLock("#{#missing.length()}")
            public void badName() {
            }

            @WithLock(value = "x", maxWait = "soon")
            public void badWait() {
            }

            @WithLock(value = "busy", onBusy = WithLock.OnBusy.SKIP)
            public int skipped() {
                return 1;
            }
        }
    }

    @Test
    void theApplicationsOwnClientIsUsedAndNestedMethodsSeeTheirOwnLease() {
        runner().run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(LockClient.class);
            Methods.Service s = context.getBean(Methods.Service.class);
            assertThat(s.nested(7, s)).isEqualTo("outer-7:true/inner");
            assertThat(CurrentLease.find()).isEmpty();
        });
    }

    @Test
    void aBusyLockSkipsAPrimitiveMethodWithZero() {
        runner().run(context -> {
            LockClient other = InMemoryLocks.builder(server).build();
            try (Lease ignored = other.lock("busy").acquire(Duration.ofSeconds(1))) {
                assertThat(context.getBean(Methods.Service.class).skipped()).isZero();
            } finally {
                other.close();
            }
            assertThat(context.getBean(Methods.Service.class).skipped()).isEqualTo(1);
        });
    }

    @Test
    void aNameOrWaitThatCannotBeUsedIsRefusedNamingTheMethod() {
        runner().run(context -> {
            Methods.Service s = context.getBean(Methods.Service.class);
            assertThatThrownBy(s::badName).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("@WithLock on " + Methods.Service.class.getName() + ".badName")
                    .hasMessageContaining("could not be evaluated");
            assertThatThrownBy(s::badWait).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("maxWait 'soon' is not a duration");
        });
    }

    @Test
    void aWithLockMethodWithoutALockClientSaysWhatIsMissing() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(BatonAutoConfiguration.class))
                .withUserConfiguration(Methods.class)
                .run(context -> assertThatThrownBy(() -> context.getBean(Methods.Service.class).inner())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("a @WithLock method needs one LockClient bean, and the application has 0"));
    }

    @Test
    void withoutADataSourceNoClientIsBuiltAndABrokenObserverSilencesNoOther() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(BatonAutoConfiguration.class))
                .withPropertyValues("baton.backend=jdbc")
                .withBean("first", LockObserver.class, () -> new LockObserver() {
                    @Override
                    public void leaseGranted(String backend, String lockName, long token) {
                        throw new IllegalStateException("a broken observer");
                    }
                })
                .withBean("second", LockObserver.class, () -> new LockObserver() {
                    @Override
                    public void leaseGranted(String backend, String lockName, long token) {
                        seen.add(lockName);
                    }
                })
                .run(context -> assertThat(context).as("no DataSource: no client").doesNotHaveBean(LockClient.class));
        LockObserver both = CompositeObserver.of(List.of(new LockObserver() {
            @Override
            public void leaseGranted(String backend, String lockName, long token) {
                throw new IllegalStateException("a broken observer");
            }
        }, new LockObserver() {
            @Override
            public void leaseGranted(String backend, String lockName, long token) {
                seen.add(lockName);
            }
        }));
        try (LockClient c = InMemoryLocks.builder(server).observer(both).build()) {
            c.lock("observed").tryAcquire().orElseThrow().close();
        }
        assertThat(seen).as("the second observer is told though the first threw").containsExactly("observed");
    }
}
