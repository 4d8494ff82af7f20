package dev.baton.testkit;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Rung 4a — leases: a hold ends when its lease time passes on the server. A lease taken over after it
 * expired is reported lost once and its stale holder cannot release its successor's grant; a lease
 * survives the loss of its connections (it is a row, not a session). The top rung for lease strategies.
 */
public abstract class LeaseContract extends LivenessContract {

    @Override
    protected Duration deadHolderBound(Duration leaseTime) {
        return leaseTime.plus(RECOVERY_SLACK);
    }

    @Test
    void aTimeoutNamesTheHolderByItsHolderIdAndToken() {
        String name = unique("holder-id");
        try (LockClient a = client(); LockClient b = client()) {
            try (Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThatThrownBy(() -> b.lock(name).acquire(Duration.ZERO))
                        .isInstanceOfSatisfying(dev.baton.LockTimeoutException.class, e -> {
                            assertThat(e.holder()).contains(held.holderId());
                            assertThat(e.holderToken()).hasValue(held.fencingToken());
                            assertThat(e.getMessage()).contains(held.holderId());
                        });
            }
        }
    }

    @Test
    void aLeaseTakenOverAfterExpiryIsReportedLostOnce() throws Exception {
        String name = unique("takeover");
        try (LockClient a = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(2)));
             LockClient b = client(); LockClient c = client()) {
            Lease first = a.lock(name).acquire(Duration.ofSeconds(5));
            AtomicInteger lost = new AtomicInteger();
            first.onLost(e -> lost.incrementAndGet());
            fixture.expireOnServer(name);
            try (Lease second = b.lock(name).tryAcquire().orElseThrow(
                    () -> new AssertionError("an expired lease must be free to take"))) {
                assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
                await().atMost(Duration.ofSeconds(5)).until(() -> lost.get() == 1);
                assertThat(first.isValid()).isFalse();
                assertThatThrownBy(first::checkValid).isInstanceOf(LockLostException.class)
                        .hasMessageContaining(name).hasMessageContaining("lost");
                AtomicInteger lateListener = new AtomicInteger();
                first.onLost(e -> lateListener.incrementAndGet());
                assertThat(lateListener).as("a listener added after the loss runs at once").hasValue(1);
                // the stale holder gives its hold back: it must not release the new holder's grant
                first.close();
                assertThat(c.lock(name).tryAcquire()).as("second holder keeps the lock").isEmpty();
                assertThatThrownBy(() -> a.lock(name).acquire(Duration.ofMillis(200)))
                        .as("the stale holder cannot get it back while held").isInstanceOf(dev.baton.LockTimeoutException.class);
                Thread.sleep(1000);
                assertThat(lost).as("listener ran exactly once").hasValue(1);
                assertThat(second.isValid()).isTrue();
            }
        }
    }

    /**
     * A lease survives the loss of its connections: it is a row, not a session, and renewal goes on over
     * new connections. (Session strategies assert the opposite in their own rung.)
     */
    @Test
    void aLeaseSurvivesTheKillingOfItsServerSessions() throws Exception {
        String name = unique("sessions");
        Duration lease = Duration.ofSeconds(2);
        try (LockClient a = fixture.newClient(ClientConfig.lease(lease)); LockClient b = client()) {
            try (Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
                AtomicInteger lost = new AtomicInteger();
                held.onLost(e -> lost.incrementAndGet());
                fixture.killServerSessions(a);
                long end = System.nanoTime() + lease.multipliedBy(2).toNanos();
                while (System.nanoTime() < end) {
                    assertThat(b.lock(name).tryAcquire()).isEmpty();
                    Thread.sleep(200);
                }
                // a renewal whose answer comes late (new connections after the kill, a busy machine) leaves the lease
                // past its local deadline for a moment: not a failure by itself, as long as it becomes valid again
                // without being reported lost (see LivenessContract.renewalKeepsALeaseAliveForFiveTimesItsLeaseTime)
                await().atMost(lease.multipliedBy(5)).until(() -> held.isValid() || lost.get() > 0);
                assertThat(lost).hasValue(0);
                held.checkValid();
            }
            assertThat(b.lock(name).tryAcquire()).isPresent().get().satisfies(Lease::close);
        }
    }

    @Test
    void tokensIncreaseWhenAnExpiredLeaseIsTakenOver() {
        String name = unique("expiry-token");
        try (LockClient a = client(); LockClient b = client()) {
            Lease first = a.lock(name).acquire(Duration.ofSeconds(5));
            fixture.expireOnServer(name);
            try (Lease second = b.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            }
            first.close();
            try (Lease third = a.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(third.fencingToken()).isGreaterThan(first.fencingToken());
            }
        }
    }
}
