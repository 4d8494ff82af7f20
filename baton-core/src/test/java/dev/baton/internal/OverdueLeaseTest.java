package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockClients;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * A lease whose local deadline passed although none of its renewals failed (the process was paused: a long GC, a
 * stopped container) is only uncertain over a backend that confirms grants: it is renewed once more and lost only if
 * the server no longer shows it or cannot be asked. Found with {@code baton run --strategy session}: a paused
 * {@code baton} whose database session kept the lock throughout exited 76 ("lost") when it ran again.
 */
class OverdueLeaseTest {
    private static final Duration LEASE = Duration.ofSeconds(60);

    static final class Backend extends LeaseConfirmationTest.ConfirmingBackend {
        final AtomicInteger renewals = new AtomicInteger();
        final AtomicBoolean renewalsFail = new AtomicBoolean();

        @Override
        public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
            renewals.incrementAndGet();
            if (renewalsFail.get()) {
                throw new LockBackendException("overdue-test", "unreachable", null);
            }
            return super.renew(leases, leaseTime);
        }
    }

    final class Builder extends AbstractClientBuilder<Builder> {
        final Backend backend = new Backend();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    @Test
    void aLeasePastItsDeadlineThatTheServerStillShowsIsRenewedNotLost() throws Exception {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("paused").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            clock.addAndGet(LEASE.toNanos() + 1); // the process was paused for longer than the lease
            await(() -> b.backend.renewals.get() > 0 && lease.isValid(), "renewed by the watchdog's confirmer");
            assertThat(lost).isEmpty();
            lease.checkValid();
            lease.close();
            assertThat(b.backend.held).as("released").isEmpty();
        }
    }

    @Test
    void aLeasePastItsDeadlineThatTheServerNoLongerShowsIsLostOnce() throws Exception {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("taken").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            b.backend.held.clear(); // expired on the server meanwhile
            clock.addAndGet(LEASE.toNanos() + 1);
            await(() -> !lost.isEmpty(), "lost");
            assertThat(lost).singleElement().asString().contains("server no longer shows the grant");
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class);
            lease.close();
            assertThat(lost).hasSize(1);
        }
    }

    @Test
    void checkValidPastTheDeadlineAsksTheServerBeforeTheWatchdogDoes() {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("checked").acquire(Duration.ofSeconds(1));
            clock.addAndGet(LEASE.toNanos() + 1);
            lease.checkValid(); // renewed, in this thread if the watchdog has not yet
            assertThat(lease.isValid()).isTrue();
            b.backend.held.clear();
            clock.addAndGet(LEASE.toNanos() + 1);
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("no longer shows");
            lease.close();
        }
    }

    @Test
    void aLeaseWhoseRenewalFailedIsLostAtItsDeadlineWithoutAnotherTry() throws Exception {
        Builder b = new Builder().leaseTime(LEASE).renewInterval(Duration.ofMillis(20)).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("unreachable").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            b.backend.renewalsFail.set(true);
            int before = b.backend.renewals.get();
            await(() -> b.backend.renewals.get() > before, "a failed renewal");
            clock.addAndGet(LEASE.toNanos() + 1);
            await(() -> !lost.isEmpty(), "lost");
            assertThat(lost).singleElement().asString().contains("no successful renewal before its deadline")
                    .doesNotContain("renewing it then failed");
            lease.close();
        }
    }

    @Test
    void aLeasePastItsDeadlineWhoseRenewalFailsThenIsLost() throws Exception {
        Builder b = new Builder().leaseTime(LEASE).ticker(clock::get);
        try (LockClient client = b.build()) {
            Lease lease = client.lock("cut").acquire(Duration.ofSeconds(1));
            List<String> lost = new CopyOnWriteArrayList<>();
            lease.onLost(e -> lost.add(e.getMessage()));
            b.backend.renewalsFail.set(true); // the network died during the pause
            clock.addAndGet(LEASE.toNanos() + 1);
            await(() -> !lost.isEmpty(), "lost");
            assertThat(lost).singleElement().asString().contains("renewing it then failed");
            lease.close();
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within 10 s: " + what);
            }
            Thread.sleep(5);
        }
    }
}
