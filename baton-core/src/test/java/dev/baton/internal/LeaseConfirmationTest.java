package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import dev.baton.LockInfo;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockClients;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code checkValid()} over a backend that {@link ConfirmsGrants}: exact, and a stale grant is lost once. */
class LeaseConfirmationTest {

    /** Grants any free name (as {@link CapabilitiesTest.Base}); the server's truth is {@code held}; confirms against it. */
    static class ConfirmingBackend extends CapabilitiesTest.Base implements ConfirmsGrants {
        final AtomicInteger confirmations = new AtomicInteger();
        final AtomicBoolean unreachable = new AtomicBoolean();

        @Override
        public boolean confirm(LeaseKey lease) {
            confirmations.incrementAndGet();
            if (unreachable.get()) {
                throw new LockBackendException("confirming", "unreachable", null);
            }
            return lease.equals(held.get(lease.name()));
        }
    }

    static final class Builder extends AbstractClientBuilder<Builder> {
        final ConfirmingBackend backend = new ConfirmingBackend();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    @Test
    void checkValidMarksALeaseLostOnceWhenTheServerNoLongerShowsIt() {
        // a long lease: no renewal runs during the test, so only checkValid's round trip can see the loss
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("x").acquire(Duration.ofSeconds(1));
            AtomicInteger lost = new AtomicInteger();
            lease.onLost(e -> lost.incrementAndGet());
            lease.checkValid();
            assertThat(b.backend.confirmations).hasValue(1);
            b.backend.held.clear(); // the server freed it (session ended, row taken over)
            assertThat(lease.isValid()).as("local, until the next renewal").isTrue();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("no longer shows");
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockLostException.class);
            assertThat(lost).hasValue(1);
            lease.close();
        }
    }

    @Test
    void checkValidThrowsTheBackendErrorWhenTheServerCannotBeAsked() {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60));
        try (LockClient client = b.build()) {
            Lease lease = client.lock("y").acquire(Duration.ofSeconds(1));
            b.backend.unreachable.set(true);
            assertThatThrownBy(lease::checkValid).isInstanceOf(LockBackendException.class);
            assertThat(lease.isValid()).as("not known lost").isTrue();
            b.backend.unreachable.set(false);
            lease.checkValid();
            lease.close();
        }
    }
}
