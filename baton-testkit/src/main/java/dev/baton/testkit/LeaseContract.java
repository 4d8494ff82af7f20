package dev.baton.testkit;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockLostException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Rung 2 — expiry and renewal: a dead holder frees the lock within its lease time, a live one keeps it as
 * long as it likes, and a lease that can no longer be kept is reported lost, once. Applies to strategies
 * whose holds end by lease time.
 */
public abstract class LeaseContract extends ExclusionContract {

    /** The fixture's class, rebuilt in the child JVM of {@link HolderProcess}. */
    protected abstract Class<? extends LockFixture> fixtureClass();

    /** Slack allowed past the lease time for a dead holder's lock to reach a waiter. */
    protected static final Duration RECOVERY_SLACK = Duration.ofMillis(2500);

    @Test
    void aKilledHolderProcessFreesTheLockWithinItsLeaseTime() throws Exception {
        String name = unique("dead");
        Duration lease = Duration.ofMillis(1500);
        try (LockClient waiter = client(); HolderProcess holder = HolderProcess.start(fixtureClass(), name, lease)) {
            assertThat(waiter.lock(name).tryAcquire()).as("held by the child").isEmpty();
            long killed = System.nanoTime();
            holder.kill();
            try (Lease next = waiter.lock(name).acquire(Duration.ofSeconds(30))) {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                System.out.printf("[%s] kill -9 of holder to next grant: %d ms (lease %d ms)%n", fixture.name(), ms,
                        lease.toMillis());
                assertThat(ms).as("kill to next grant, ms").isLessThanOrEqualTo(lease.plus(RECOVERY_SLACK).toMillis());
                assertThat(next.fencingToken()).isGreaterThan(holder.token());
            }
        }
    }

    @Test
    void renewalKeepsALeaseAliveForTenTimesItsLeaseTime() throws Exception {
        String name = unique("renew");
        Duration lease = Duration.ofMillis(400);
        try (LockClient a = fixture.newClient(ClientConfig.lease(lease)); LockClient b = client()) {
            AtomicInteger lost = new AtomicInteger();
            try (Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
                held.onLost(e -> lost.incrementAndGet());
                long end = System.nanoTime() + lease.multipliedBy(11).toNanos();
                while (System.nanoTime() < end) {
                    assertThat(held.isValid()).isTrue();
                    assertThat(b.lock(name).tryAcquire()).as("another client while renewed").isEmpty();
                    Thread.sleep(150);
                }
                held.checkValid();
                assertThat(lost).hasValue(0);
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

    @Test
    void aLeaseIsReportedLostWhenTheServerBecomesUnreachable() throws Exception {
        String name = unique("unreachable");
        Duration lease = Duration.ofMillis(1000);
        try (LockClient a = fixture.newClient(ClientConfig.lease(lease))) {
            Lease held = a.lock(name).acquire(Duration.ofSeconds(5));
            AtomicInteger lost = new AtomicInteger();
            held.onLost(e -> lost.incrementAndGet());
            long cut = System.nanoTime();
            try (AutoCloseable ignored = fixture.cutOff(a)) {
                await().atMost(lease.plus(RECOVERY_SLACK)).until(() -> lost.get() == 1);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
                System.out.printf("[%s] cut-off to lost-lease notice: %d ms (lease %d ms)%n", fixture.name(), ms,
                        lease.toMillis());
                assertThat(held.isValid()).isFalse();
                assertThatThrownBy(held::checkValid).isInstanceOf(LockLostException.class);
            }
            try {
                held.close();
            } catch (dev.baton.LockBackendException e) {
                // the release may fail while the connection recovers; the lease has ended either way
            }
            assertThat(lost).hasValue(1);
        }
        try (LockClient b = client()) {
            assertThat(b.lock(name).acquire(Duration.ofSeconds(10)).fencingToken()).isPositive();
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
                assertThat(held.isValid()).isTrue();
                assertThat(lost).hasValue(0);
            }
            assertThat(b.lock(name).tryAcquire()).isPresent().get().satisfies(Lease::close);
        }
    }
}
