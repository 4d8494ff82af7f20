package dev.baton.spring.boot;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockObserver;
import dev.baton.memory.InMemoryLockServer;
import dev.baton.memory.InMemoryLocks;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;

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
        return starter()
                .withBean(LockClient.class, () -> InMemoryLocks.builder(server).build())
                .withUserConfiguration(Methods.class);
    }

    /** The starter's auto-configurations, as its AutoConfiguration.imports gives them to an application. */
    private static ApplicationContextRunner starter() {
        Class<?>[] ours = ImportCandidates.load(AutoConfiguration.class, WithLockTest.class.getClassLoader())
                .getCandidates().stream().filter(name -> name.startsWith("dev.baton."))
                .map(WithLockTest::load).toArray(Class<?>[]::new);
        assertThat(ours).as("the starter's auto-configurations").isNotEmpty();
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ours));
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(name, e);
        }
    }

    /** {@code @WithLock} methods that look at the lock server from inside. */
    static class Probe {
        private final LockClient client;
        private final InMemoryLockServer server;
        private InMemoryLockServer.CutOff cut;

        Probe(LockClient client, InMemoryLockServer server) {
            this.client = client;
            this.server = server;
        }

        /** Whether another process finds the lock busy while this method runs. */
        @WithLock("probe")
        public boolean busyForOthers() {
            try (LockClient other = InMemoryLocks.builder(server).build()) {
                return other.lock("probe").tryAcquire().isEmpty() && CurrentLease.get().lockName().equals("probe");
            }
        }

        /** Succeeds, but its release cannot reach the server. */
        @WithLock("release-fails")
        public String releaseFailsAfterSuccess() {
            cut = server.cutOff(client);
            return "done";
        }

        /** Throws, and its release cannot reach the server either. */
        @WithLock("release-fails")
        public String releaseFailsAfterFailure() {
            cut = server.cutOff(client);
            throw new IllegalArgumentException("the body failed");
        }

        void restore() {
            if (cut != null) {
                cut.close();
            }
        }

        @WithLock("async")
        public CompletableFuture<String> completableFuture() {
            return CompletableFuture.completedFuture("x");
        }

        @WithLock("async")
        public CompletionStage<String> completionStage() {
            return CompletableFuture.completedFuture("x");
        }

        @WithLock("async")
        public Future<String> future() {
            return CompletableFuture.completedFuture("x");
        }

        @WithLock("async")
        public Mono<String> mono() {
            return Mono.just("x");
        }

        @WithLock("async")
        public Flux<String> flux() {
            return Flux.just("x");
        }
    }

    private ApplicationContextRunner probing(LockClient client) {
        return starter().withBean(LockClient.class, () -> client)
                .withBean(InMemoryLockServer.class, () -> server)
                .withBean(Probe.class);
    }

    @Test
    void withBatonDisabledAWithLockMethodStillRunsUnderTheApplicationsClient() {
        probing(InMemoryLocks.builder(server).build()).withPropertyValues("baton.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(LockClient.class);
            assertThat(context.getBean(Probe.class).busyForOthers()).as("the lock is held inside the method").isTrue();
        });
    }

    @Test
    void withBatonDisabledAndNoLockClientAWithLockMethodFailsSayingSo() {
        starter().withPropertyValues("baton.enabled=false").withUserConfiguration(Methods.class)
                .run(context -> assertThatThrownBy(() -> context.getBean(Methods.Service.class).inner())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("@WithLock on " + Methods.Service.class.getName() + ".inner")
                        .hasMessageContaining("baton.enabled is false")
                        .hasMessageContaining("define a LockClient bean"));
    }

    @Test
    void twoLockClientsAndNoPrimaryStartWithoutAHealthIndicatorAndAWithLockMethodNamesThem() {
        starter().withBean("first", LockClient.class, () -> InMemoryLocks.builder(server).build())
                .withBean("second", LockClient.class, () -> InMemoryLocks.builder(server).build())
                .withUserConfiguration(Methods.class)
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean("batonHealthIndicator");
                    assertThatThrownBy(() -> context.getBean(Methods.Service.class).inner())
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("the application has 2 (first, second) of which none is @Primary");
                });
    }

    @Test
    void aMethodThatReturnsBeforeItsWorkIsDoneIsRefusedNamingIt() {
        probing(InMemoryLocks.builder(server).build()).run(context -> {
            Probe p = context.getBean(Probe.class);
            for (var call : List.<Runnable>of(p::completableFuture, p::completionStage, p::future, p::mono, p::flux)) {
                assertThatThrownBy(call::run).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("@WithLock on " + Probe.class.getName() + ".")
                        .hasMessageContaining("returns before its work is done");
            }
            try (LockClient other = InMemoryLocks.builder(server).build()) {
                other.lock("async").tryAcquire().orElseThrow(() -> new AssertionError("the lock was left held"))
                        .close();
            }
        });
    }

    @Test
    void aReleaseThatFailsAfterTheMethodSucceededKeepsItsResult() {
        LockClient client = InMemoryLocks.builder(server).build();
        probing(client).run(context -> {
            Probe p = context.getBean(Probe.class);
            try {
                assertThat(p.releaseFailsAfterSuccess()).isEqualTo("done");
            } finally {
                p.restore();
            }
        });
    }

    @Test
    void aReleaseThatFailsAfterTheMethodThrewIsSuppressedByTheMethodsException() {
        LockClient client = InMemoryLocks.builder(server).build();
        probing(client).run(context -> {
            Probe p = context.getBean(Probe.class);
            try {
                assertThatThrownBy(p::releaseFailsAfterFailure).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("the body failed")
                        .satisfies(e -> assertThat(e.getSuppressed()).singleElement()
                                .isInstanceOf(LockBackendException.class));
            } finally {
                p.restore();
            }
        });
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
        starter().withUserConfiguration(Methods.class)
                .run(context -> assertThatThrownBy(() -> context.getBean(Methods.Service.class).inner())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("@WithLock on " + Methods.Service.class.getName()
                                + ".inner needs one LockClient bean, and the application has 0: give it a DataSource"));
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

    /** One method whose leaseTime cannot be used, each in a bean of its own, so that each stops its own start. */
    static class Unparseable {
        @WithLock(value = "lease", leaseTime = "soon")
        public void run() {
        }
    }

    static class Zero {
        @WithLock(value = "lease", leaseTime = "0s")
        public void run() {
        }
    }

    static class Negative {
        @WithLock(value = "lease", leaseTime = "-5s")
        public void run() {
        }
    }

    static class TooShort {
        @WithLock(value = "lease", leaseTime = "50ms")
        public void run() {
        }
    }

    static class TwoSeconds {
        @WithLock(value = "lease", leaseTime = "2s")
        public void run() {
        }
    }

    /** The exception, among the context's start failure and its causes, that refuses a {@code @WithLock} method. */
    static Throwable refusal(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            if (t instanceof IllegalStateException && t.getMessage() != null
                    && t.getMessage().contains("@WithLock on")) {
                return t;
            }
        }
        throw new AssertionError("no @WithLock refusal in the start failure", context.getStartupFailure());
    }

    @Test
    void aLeaseTimeThatCannotBeUsedStopsTheStartNamingTheMethod() {
        record Case(Class<?> bean, String says) {
        }
        for (Case c : List.of(new Case(Unparseable.class, "leaseTime 'soon' is not a duration"),
                new Case(Zero.class, "leaseTime must be positive, was PT0S"),
                new Case(Negative.class, "leaseTime must be positive, was PT-5S"),
                new Case(TooShort.class, "leaseTime must be at least 100 ms, was 50 ms"))) {
            starter().withBean(LockClient.class, () -> InMemoryLocks.builder(server).build())
                    .withBean(c.bean()).run(context -> assertThat(refusal(context))
                            .hasMessageContaining("@WithLock on " + c.bean().getName() + ".run")
                            .hasMessageContaining(c.says()));
        }
    }

    interface Job {
        void run();
    }

    /** Proxied by its interface (a JDK proxy): the start-up check reads the class behind it. */
    static class InterfaceJob implements Job {
        @Override
        @WithLock(value = "lease", leaseTime = "2s")
        public void run() {
        }
    }

    @Test
    void aLeaseTimeOverTheApplicationsOwnClientStopsTheStartSayingWhy() {
        starter().withBean(LockClient.class, () -> InMemoryLocks.builder(server).build())
                .withBean(Job.class, InterfaceJob::new)
                .run(context -> assertThat(refusal(context))
                        .hasMessageContaining("@WithLock on " + InterfaceJob.class.getName() + ".run sets leaseTime ="
                                + " PT2S, but its LockClient bean is the application's own"));
        starter().withBean(LockClient.class, () -> InMemoryLocks.builder(server).build())
                .withBean(TwoSeconds.class)
                .run(context -> assertThat(refusal(context))
                        .hasMessageContaining("@WithLock on " + TwoSeconds.class.getName() + ".run sets leaseTime ="
                                + " PT2S, but its LockClient bean is the application's own"));
    }

    @Test
    void aLeaseTimeInABeanCreatedAfterTheStartIsRefusedAtItsFirstCall() {
        starter().withBean(LockClient.class, () -> InMemoryLocks.builder(server).build())
                .withBean(TwoSeconds.class, TwoSeconds::new, d -> d.setLazyInit(true))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThatThrownBy(() -> context.getBean(TwoSeconds.class).run())
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("@WithLock on " + TwoSeconds.class.getName() + ".run sets leaseTime")
                            .hasMessageContaining("the application's own");
                });
    }
}
