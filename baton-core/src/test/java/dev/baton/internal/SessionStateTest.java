package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockClients;
import dev.baton.spi.ReportsSessionState;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The core over a backend that {@link ReportsSessionState reports its session's state}: a suspension makes leases
 * uncertain (not valid, not lost), a resumption confirms each one (valid again, or lost), a lost session loses every
 * lease once.
 */
class SessionStateTest {

    /** Grants free names ({@link CapabilitiesTest.Base}); the test drives the session through {@link #listener}. */
    static final class SessionBackend extends CapabilitiesTest.Base implements ReportsSessionState {
        volatile Listener listener;
        final AtomicInteger confirmations = new AtomicInteger();
        /** The server cannot be reached: confirm and renew fail. */
        final AtomicBoolean unreachable = new AtomicBoolean();

        @Override
        public void watchSession(Listener listener) {
            this.listener = listener;
            calls.add("watch");
        }

        @Override
        public boolean confirm(LeaseKey lease) {
            confirmations.incrementAndGet();
            if (unreachable.get()) {
                throw new LockBackendException(description(), "not connected", null);
            }
            return lease.equals(held.get(lease.name()));
        }

        @Override
        public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
            if (unreachable.get()) {
                throw new LockBackendException(description(), "not connected", null);
            }
            return super.renew(leases, leaseTime);
        }
    }

    static final class Builder extends AbstractClientBuilder<Builder> {
        final SessionBackend backend = new SessionBackend();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    @Test
    void theSessionListenerIsGivenBeforeTheBackendStarts() {
        Builder b = new Builder();
        try (LockClient c = b.build()) {
            assertThat(b.backend.calls).startsWith("watch", "start " + c.clientId());
        }
    }

    @Test
    void aSuspendedSessionMakesLeasesUncertainUntilTheServerConfirmsThemAfterResuming() {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("s").acquire(Duration.ofSeconds(1));
            AtomicInteger lost = new AtomicInteger();
            lease.onLost(e -> lost.incrementAndGet());
            b.backend.unreachable.set(true);
            b.backend.listener.suspended();
            assertThat(lease.isValid()).as("uncertain while suspended").isFalse();
            assertThatThrownBy(lease::checkValid).as("checkValid asks the server, which cannot be reached")
                    .isInstanceOf(LockBackendException.class);
            assertThat(lost).as("uncertain is not lost").hasValue(0);
            // a lease granted while suspended (its grant raced the suspension) is uncertain too
            Lease second = client.lock("t").acquire(Duration.ofSeconds(1));
            assertThat(second.isValid()).isFalse();

            b.backend.unreachable.set(false);
            int before = b.backend.confirmations.get();
            b.backend.listener.resumed();
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.isValid() && second.isValid());
            assertThat(b.backend.confirmations.get() - before).as("one confirmation per uncertain lease")
                    .isGreaterThanOrEqualTo(2);
            lease.checkValid();
            assertThat(lost).hasValue(0);
            // re-entry on a certain lease costs no round trip
            int confirmed = b.backend.confirmations.get();
            try (Lease inner = client.lock("s").acquire(Duration.ofSeconds(1))) {
                assertThat(inner.holdCount()).isEqualTo(2);
            }
            assertThat(b.backend.confirmations).hasValue(confirmed);
            second.close();
            lease.close();
        }
    }

    @Test
    void aLeaseTheServerNoLongerShowsAfterResumingIsLostOnce() {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("gone").acquire(Duration.ofSeconds(1));
            AtomicInteger lost = new AtomicInteger();
            lease.onLost(e -> lost.incrementAndGet());
            b.backend.listener.suspended();
            b.backend.held.clear(); // the node vanished meanwhile
            b.backend.listener.resumed();
            await().atMost(Duration.ofSeconds(5)).until(() -> lost.get() == 1);
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("after its session was suspended");
            b.backend.listener.resumed();
            assertThat(lost).hasValue(1);
            lease.close();
        }
    }

    @Test
    void aReentrantAcquireOfAnUncertainLeaseAsksTheServerFirst() {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("re").acquire(Duration.ofSeconds(1));
            b.backend.unreachable.set(true);
            b.backend.listener.suspended();
            assertThatThrownBy(() -> client.lock("re").acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockBackendException.class);
            b.backend.unreachable.set(false);
            b.backend.held.clear();
            b.backend.listener.suspended(); // still suspended: nothing confirms it in the background
            assertThatThrownBy(() -> client.lock("re").acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockLostException.class);
            assertThat(lease.isValid()).isFalse();
            lease.close();
        }
    }

    @Test
    void aLostSessionLosesEveryLeaseOnceEvenIfItResumesLater() {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60));
        try (LockClient client = b.build()) {
            AtomicInteger lost = new AtomicInteger();
            Lease x = client.lock("x").acquire(Duration.ofSeconds(1));
            Lease y = client.lock("y").acquire(Duration.ofSeconds(1));
            x.onLost(e -> lost.incrementAndGet());
            y.onLost(e -> lost.incrementAndGet());
            b.backend.listener.suspended();
            b.backend.listener.sessionLost();
            assertThat(lost).hasValue(2);
            assertThatThrownBy(x::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("session ended");
            b.backend.listener.sessionLost();
            b.backend.listener.resumed();
            assertThat(lost).hasValue(2);
            assertThat(x.isValid()).isFalse();
            x.close();
            y.close();
            // a new grant after the loss is certain
            try (Lease again = client.lock("x").acquire(Duration.ofSeconds(1))) {
                assertThat(again.isValid()).isTrue();
            }
        }
    }

    @Test
    void anUncertainLeaseIsLostAtItsDeadlineWhenTheSessionNeverResumes() {
        Builder b = new Builder().leaseTime(Duration.ofMillis(300));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("deadline").acquire(Duration.ofSeconds(1));
            AtomicInteger lost = new AtomicInteger();
            lease.onLost(e -> lost.incrementAndGet());
            b.backend.unreachable.set(true);
            b.backend.listener.suspended();
            await().atMost(Duration.ofSeconds(5)).until(() -> lost.get() == 1);
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("deadline");
            lease.close();
        }
    }
}
