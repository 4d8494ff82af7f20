package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockBackend;
import dev.baton.spi.LockClients;
import dev.baton.spi.ReleaseListener;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The core's own logic (batching, loss, reentrancy bookkeeping) over a small in-process backend that
 * records what the core asks of it. Backends themselves are tested against real servers by the contract
 * suite; this only checks what the core does with the SPI.
 */
class CoreLockClientTest {

    /** Grants any free name; records renewal batches; can be told to fail or to forget grants. */
    static final class RecordingBackend implements LockBackend {
        final Map<String, LeaseKey> held = new ConcurrentHashMap<>();
        final List<Integer> renewBatchSizes = new CopyOnWriteArrayList<>();
        final AtomicLong tokens = new AtomicLong();
        final AtomicBoolean failing = new AtomicBoolean();

        @Override
        public String description() {
            return "recording";
        }

        @Override
        public boolean notifiesReleases() {
            return false;
        }

        @Override
        public void start(ReleaseListener listener) {
        }

        @Override
        public synchronized AcquireResult tryAcquire(String name, String owner, Duration leaseTime) {
            LeaseKey k = held.get(name);
            if (k != null) {
                return new AcquireResult.Busy(k.owner(), k.token(), null);
            }
            LeaseKey mine = new LeaseKey(name, owner, tokens.incrementAndGet());
            held.put(name, mine);
            return new AcquireResult.Granted(mine.token());
        }

        @Override
        public synchronized boolean release(LeaseKey lease) {
            return held.remove(lease.name(), lease);
        }

        @Override
        public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
            if (failing.get()) {
                throw new LockBackendException("recording", "unreachable", null);
            }
            renewBatchSizes.add(leases.size());
            Set<LeaseKey> out = new HashSet<>();
            for (LeaseKey k : leases) {
                if (k.equals(held.get(k.name()))) {
                    out.add(k);
                }
            }
            return out;
        }

        @Override
        public List<LockInfo> inspect() {
            return List.of();
        }

        @Override
        public void close() {
        }
    }

    static final class Builder extends AbstractClientBuilder<Builder> {
        final RecordingBackend backend = new RecordingBackend();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    @Test
    void allHeldLeasesAreRenewedInOneBatchPerInterval() throws Exception {
        Builder b = new Builder().leaseTime(Duration.ofMillis(300));
        try (LockClient client = b.build()) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                leases.add(client.lock("l" + i).acquire(Duration.ofSeconds(1)));
            }
            Thread.sleep(700);
            assertThat(b.backend.renewBatchSizes).isNotEmpty();
            // every renewal after all 50 were taken renewed all of them in one call
            assertThat(b.backend.renewBatchSizes.get(b.backend.renewBatchSizes.size() - 1)).isEqualTo(50);
            assertThat(b.backend.renewBatchSizes.size()).as("calls in ~7 intervals of 100 ms").isLessThanOrEqualTo(8);
            assertThat(leases).allMatch(Lease::isValid);
        }
    }

    @Test
    void aGrantTheServerNoLongerShowsIsLostOnceAtTheNextRenewal() throws Exception {
        Builder b = new Builder().leaseTime(Duration.ofMillis(300));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("x").acquire(Duration.ofSeconds(1));
            AtomicInteger lost = new AtomicInteger();
            lease.onLost(e -> lost.incrementAndGet());
            b.backend.held.remove("x");
            Thread.sleep(400);
            assertThat(lost).hasValue(1);
            assertThat(lease.isValid()).isFalse();
            Thread.sleep(300);
            assertThat(lost).as("once").hasValue(1);
        }
    }

    @Test
    void failingRenewalsLoseTheLeaseAtItsDeadlineNotBefore() throws Exception {
        Builder b = new Builder().leaseTime(Duration.ofMillis(600));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("x").acquire(Duration.ofSeconds(1));
            AtomicLong lostAt = new AtomicLong();
            long start = System.nanoTime();
            lease.onLost(e -> lostAt.set(System.nanoTime()));
            b.backend.failing.set(true);
            Thread.sleep(300);
            assertThat(lease.isValid()).as("still within the deadline").isTrue();
            Thread.sleep(700);
            assertThat(lostAt.get()).isNotZero();
            assertThat((lostAt.get() - start) / 1_000_000).as("ms to loss").isBetween(500L, 900L);
        }
    }

    @Test
    void reentrantHoldsReleaseOnlyOnTheLast() {
        Builder b = new Builder();
        try (LockClient client = b.build()) {
            Lease outer = client.lock("r").acquire();
            Lease inner = client.lock("r").acquire();
            assertThat(inner.holdCount()).isEqualTo(2);
            inner.close();
            assertThat(b.backend.held).containsKey("r");
            outer.close();
            assertThat(b.backend.held).doesNotContainKey("r");
        }
    }

    @Test
    void builderSettingsAreCheckedAtOnce() {
        Builder b = new Builder();
        assertThatThrownBy(() -> b.leaseTime(null)).hasMessage("leaseTime must not be null");
        assertThatThrownBy(() -> b.leaseTime(Duration.ZERO)).hasMessageContaining("leaseTime must be positive");
        assertThatThrownBy(() -> b.leaseTime(Duration.ofMillis(50))).hasMessageContaining("at least 100 ms");
        assertThatThrownBy(() -> b.maxPollInterval(Duration.ofSeconds(-1))).hasMessageContaining("maxPollInterval");
        assertThatThrownBy(() -> b.clientIdPrefix(" ")).hasMessageContaining("clientIdPrefix");
        Builder conflicting = new Builder().leaseTime(Duration.ofSeconds(1)).renewInterval(Duration.ofSeconds(2));
        assertThatThrownBy(conflicting::build).hasMessageContaining("renewInterval (2000 ms) must be shorter than leaseTime (1000 ms)");
        Builder polls = new Builder().minPollInterval(Duration.ofSeconds(2)).maxPollInterval(Duration.ofSeconds(1));
        assertThatThrownBy(polls::build).hasMessageContaining("minPollInterval");
    }

    @Test
    void clientIdsNameHostPidAndARandomSuffix() {
        try (LockClient a = new Builder().clientIdPrefix("web-1").build(); LockClient b = new Builder().clientIdPrefix("web-1").build()) {
            assertThat(a.clientId()).startsWith("web-1/" + ProcessHandle.current().pid() + "/");
            assertThat(a.clientId()).isNotEqualTo(b.clientId());
            try (Lease l = a.lock("h").acquire()) {
                assertThat(l.holderId()).startsWith(a.clientId() + "#");
            }
        }
    }
}
