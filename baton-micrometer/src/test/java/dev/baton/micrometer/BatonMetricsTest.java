package dev.baton.micrometer;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.LockObserver;
import dev.baton.LockTimeoutException;
import dev.baton.memory.InMemoryLockServer;
import dev.baton.memory.InMemoryLocks;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The meters of {@link BatonMetrics}, read from a {@link SimpleMeterRegistry}, over the in-memory backend. */
class BatonMetricsTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** One per registry, as in an application: a second one's gauges on the same registry would be ignored. */
    private final BatonMetrics metrics = BatonMetrics.builder(registry).build();
    private final List<LockClient> clients = new ArrayList<>();

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private LockClient client(LockObserver observer) {
        LockClient c = InMemoryLocks.builder(server).observer(observer).build();
        clients.add(c);
        return c;
    }

    private LockClient client() {
        return client(metrics);
    }

    private Timer acquire(String lock, String outcome) {
        return registry.find(BatonMetrics.ACQUIRE).tags("backend", "in-memory", "lock", lock, "outcome", outcome)
                .timer();
    }

    private double held(String lock) {
        Gauge g = registry.find(BatonMetrics.LEASES_HELD).tags("backend", "in-memory", "lock", lock).gauge();
        return g == null ? 0 : g.value();
    }

    @Test
    void aGrantIsTimedCountedAsHeldAndItsHoldTimedAtRelease() {
        LockClient c = client();
        try (Lease lease = c.lock("m-granted").acquire(Duration.ofSeconds(1))) {
            assertThat(held("m-granted")).isEqualTo(1);
            try (Lease again = c.lock("m-granted").acquire(Duration.ofSeconds(1))) {
                assertThat(again.holdCount()).isEqualTo(2);
                assertThat(held("m-granted")).as("a re-entrant hold is no new grant").isEqualTo(1);
            }
        }
        assertThat(acquire("m-granted", "granted").count()).isEqualTo(2);
        assertThat(acquire("m-granted", "granted").getId().getTag("exception")).isEqualTo("none");
        assertThat(held("m-granted")).isZero();
        Timer duration = registry.find(BatonMetrics.LEASE_DURATION).tags("lock", "m-granted", "lost", "false").timer();
        assertThat(duration).isNotNull();
        assertThat(duration.count()).isEqualTo(1);
        assertThat(registry.find(BatonMetrics.ACQUIRE_WAIT).timer()).as("nobody waited").isNull();
    }

    @Test
    void aBusyTryAndATimedOutWaitHaveTheirOutcomesAndTheWaitIsTimed() {
        LockClient holder = client();
        LockClient other = client();
        try (Lease ignored = holder.lock("m-busy").acquire(Duration.ofSeconds(1))) {
            assertThat(other.lock("m-busy").tryAcquire()).isEmpty();
            assertThatThrownBy(() -> other.lock("m-busy").acquire(Duration.ofMillis(50)))
                    .isInstanceOf(LockTimeoutException.class);
        }
        assertThat(acquire("m-busy", "busy").count()).isEqualTo(1);
        Timer timeout = acquire("m-busy", "timeout");
        assertThat(timeout.count()).isEqualTo(1);
        assertThat(timeout.getId().getTag("exception")).isEqualTo("LockTimeoutException");
        assertThat(timeout.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(50);
        Timer waited = registry.find(BatonMetrics.ACQUIRE_WAIT).tags("lock", "m-busy", "outcome", "timeout").timer();
        assertThat(waited.count()).isEqualTo(1);
        assertThat(waited.totalTime(TimeUnit.NANOSECONDS)).isPositive();
    }

    @Test
    void aWaiterGrantedAfterTheReleaseRecordsItsWait() throws Exception {
        LockClient holder = client();
        LockClient waiter = client();
        Lease first = holder.lock("m-wait").acquire(Duration.ofSeconds(1));
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Long> second = CompletableFuture.supplyAsync(() -> {
            started.countDown();
            try (Lease l = waiter.lock("m-wait").acquire(Duration.ofSeconds(10))) {
                return l.fencingToken();
            }
        });
        started.await();
        await().atMost(Duration.ofSeconds(5)).until(() -> !server.waiting("m-wait").isEmpty());
        first.close();
        assertThat(second.get(10, TimeUnit.SECONDS)).isGreaterThan(first.fencingToken());
        Timer waited = registry.find(BatonMetrics.ACQUIRE_WAIT).tags("lock", "m-wait", "outcome", "granted").timer();
        assertThat(waited.count()).isEqualTo(1);
        assertThat(acquire("m-wait", "granted").count()).isEqualTo(2);
    }

    @Test
    void aLeaseTheServerEndedIsCountedLostByCauseAndNoLongerHeld() {
        LockClient c = client();
        Lease lease = c.lock("m-lost").acquire(Duration.ofSeconds(1));
        server.expire("m-lost");
        assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class);
        Counter lost = registry.find(BatonMetrics.LEASES_LOST).tags("lock", "m-lost", "cause", "not_on_server")
                .counter();
        assertThat(lost.count()).isEqualTo(1);
        assertThat(held("m-lost")).isZero();
        lease.close();
        assertThat(held("m-lost")).as("a lost lease's release does not count it twice").isZero();
        assertThat(registry.find(BatonMetrics.LEASE_DURATION).tags("lock", "m-lost", "lost", "true").timer().count())
                .isEqualTo(1);
    }

    @Test
    void renewalsAreCountedOkAndFailedAndALeaseCutOffIsLostByDeadline() {
        // a 1 s lease renewed every 50 ms: two renewals counted "ok" before a busy machine's late one could lose it
        LockClient c = InMemoryLocks.builder(server).leaseTime(Duration.ofSeconds(1))
                .renewInterval(Duration.ofMillis(50)).observer(metrics).build();
        clients.add(c);
        try (Lease ignored = c.lock("m-renew").acquire(Duration.ofSeconds(1))) {
            await().atMost(Duration.ofSeconds(5)).until(() -> renewals("ok") >= 2);
            try (InMemoryLockServer.CutOff cut = server.cutOff(c)) {
                await().atMost(Duration.ofSeconds(5)).until(() -> renewals("failed") >= 1);
                await().atMost(Duration.ofSeconds(5)).until(() -> registry.find(BatonMetrics.LEASES_LOST)
                        .tags("lock", "m-renew", "cause", "deadline").counter() != null);
            }
        }
        assertThat(held("m-renew")).isZero();
    }

    private double renewals(String result) {
        Counter c = registry.find(BatonMetrics.RENEWALS).tags("backend", "in-memory", "result", result).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void closingTheClientLosesItsLeasesAsClientClosed() {
        LockClient c = client();
        c.lock("m-closed").acquire(Duration.ofSeconds(1));
        c.close();
        assertThat(registry.find(BatonMetrics.LEASES_LOST).tags("lock", "m-closed", "cause", "client_closed")
                .counter().count()).isEqualTo(1);
        assertThat(held("m-closed")).isZero();
    }

    @Test
    void theLockTagIsMappedAndCappedSoIdsCannotGrowTheSeries() {
        LockClient c = client(BatonMetrics.builder(registry).maxLockNames(2)
                .lockNameTag(name -> name.replaceAll(":\\d+$", ":*")).build());
        for (String name : List.of("order:1", "order:2", "invoice:7", "report", "report-2")) {
            c.lock(name).tryAcquire().orElseThrow().close();
        }
        assertThat(acquire("order:*", "granted").count()).isEqualTo(2);
        assertThat(acquire("invoice:*", "granted").count()).isEqualTo(1);
        assertThat(acquire(BatonMetrics.OTHER, "granted").count()).as("report and report-2, past the cap")
                .isEqualTo(2);
        assertThat(registry.find(BatonMetrics.ACQUIRE).timers()).hasSize(3);
    }

    @Test
    void anAcquisitionIsAnObservationWithItsOutcome() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        LockClient c = client(BatonMetrics.builder(registry).observationRegistry(observations).build());
        c.lock("m-traced").acquire(Duration.ofSeconds(1)).close();
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo(BatonMetrics.OBSERVATION).that()
                .hasBeenStarted().hasBeenStopped()
                .hasLowCardinalityKeyValue("backend", "in-memory")
                .hasLowCardinalityKeyValue("lock", "m-traced")
                .hasLowCardinalityKeyValue("outcome", "granted")
                .hasHighCardinalityKeyValue("lock.name", "m-traced");
        assertThat(acquire("m-traced", "granted").count()).isEqualTo(1);
    }

    @Test
    void anAcquisitionTheBackendFailsIsAnErrorWithItsExceptionAndAnObservationError() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        LockClient c = client(BatonMetrics.builder(registry).observationRegistry(observations).build());
        try (InMemoryLockServer.CutOff ignored = server.cutOff(c)) {
            assertThatThrownBy(() -> c.lock("m-error").tryAcquire()).isInstanceOf(LockBackendException.class);
        }
        Timer error = acquire("m-error", "error");
        assertThat(error).as("baton.acquire{outcome=error} in %s", registry.getMetersAsString()).isNotNull();
        assertThat(error.count()).isEqualTo(1);
        assertThat(error.getId().getTag("exception")).isEqualTo("LockBackendException");
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo(BatonMetrics.OBSERVATION).that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "error")
                .assertThatError().isInstanceOf(LockBackendException.class);
        assertThat(held("m-error")).isZero();
    }

    @Test
    void anObserverThatThrowsChangesNoOutcome() {
        LockObserver broken = new LockObserver() {
            @Override
            public Acquisition acquireStarted(String backend, String lockName, boolean waits) {
                throw new IllegalStateException("broken observer");
            }

            @Override
            public void leaseGranted(String backend, String lockName, long fencingToken) {
                throw new IllegalStateException("broken observer");
            }

            @Override
            public void leaseReleased(String backend, String lockName, Duration held, boolean wasLost) {
                throw new IllegalStateException("broken observer");
            }
        };
        LockClient c = client(broken);
        try (Lease lease = c.lock("m-broken").acquire(Duration.ofSeconds(1))) {
            assertThat(lease.isValid()).isTrue();
        }
        assertThat(c.lock("m-broken").tryAcquire()).isPresent();
    }

    @Test
    void aClientTakesOneObserver() {
        InMemoryLocks.Builder builder = InMemoryLocks.builder(server).observer(BatonMetrics.builder(registry).build());
        assertThatThrownBy(() -> builder.observer(BatonMetrics.builder(registry).build()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("observer was already set");
        assertThatThrownBy(() -> BatonMetrics.builder(registry).maxLockNames(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxLockNames");
    }

    @Test
    void theBackendTagIsTheKindOfBackend() {
        assertThat(BatonMetrics.backendTag("jdbc-lease/postgresql (table baton_locks)"))
                .isEqualTo("jdbc-lease/postgresql");
        assertThat(BatonMetrics.backendTag("redis (127.0.0.1:6379, prefix baton:)")).isEqualTo("redis");
        assertThat(BatonMetrics.backendTag("zookeeper")).isEqualTo("zookeeper");
    }
}
