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
 * Rung 3 — liveness: a dead holder frees the lock within the strategy's bound, a live one keeps it as long
 * as it likes, and a lease the client can no longer vouch for (its server unreachable) is reported lost,
 * once. Applies to every strategy; lease and session strategies then part ways
 * ({@link LeaseContract}, {@link SessionContract}).
 *
 * <p>The dead holder is a real process killed with {@code kill -9} when the fixture is
 * {@link LockFixture#crossProcess() cross-process}; otherwise (a server inside the test's JVM, which a second
 * JVM cannot reach) a client crashed in process by {@link LockFixture#crash}: one rung, nothing skipped.
 */
public abstract class LivenessContract extends FencingContract {

    /** The fixture's class, rebuilt in the child JVM of {@link HolderProcess}. */
    protected abstract Class<? extends LockFixture> fixtureClass();

    /** Slack allowed past the strategy's own bound, for a noisy machine. */
    protected static final Duration RECOVERY_SLACK = Duration.ofMillis(2500);

    /**
     * How long after a holder process is killed its lock must reach a waiter: for a lease, its lease
     * time plus slack; for a session lock, the slack alone (the server frees it when the connection closes).
     */
    protected abstract Duration deadHolderBound(Duration leaseTime);

    /**
     * A dead holder's lock reaches a waiter within {@link #deadHolderBound}: a holder process killed with
     * {@code kill -9} on a {@link LockFixture#crossProcess() cross-process} fixture, else a client the fixture crashes.
     */
    @Test
    void aDeadHolderFreesTheLockWithinItsBound() throws Exception {
        if (fixture.crossProcess()) {
            killedHolderProcess();
        } else {
            crashedHolder();
        }
    }

    private void killedHolderProcess() throws Exception {
        String name = unique("dead");
        Duration lease = Duration.ofMillis(1500);
        try (LockClient waiter = client(); HolderProcess holder = HolderProcess.start(fixtureClass(), name, lease)) {
            assertThat(waiter.lock(name).tryAcquire()).as("held by the child").isEmpty();
            long killed = System.nanoTime();
            holder.kill();
            try (Lease next = waiter.lock(name).acquire(Duration.ofSeconds(30))) {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                System.out.printf("[%s] kill -9 of holder to next grant: %d ms (lease %d ms, bound %d ms)%n", fixture.name(),
                        ms, lease.toMillis(), deadHolderBound(lease).toMillis());
                assertThat(ms).as("kill to next grant, ms").isLessThanOrEqualTo(deadHolderBound(lease).toMillis());
                assertThat(next.fencingToken()).isGreaterThan(holder.token());
            }
        }
    }

    /** The in-process counterpart: the holder is a client the fixture crashes (it vanishes without releasing). */
    private void crashedHolder() throws Exception {
        String name = unique("crashed");
        Duration lease = Duration.ofMillis(1500);
        try (LockClient holder = fixture.newClient(ClientConfig.lease(lease)); LockClient waiter = client()) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            assertThat(waiter.lock(name).tryAcquire()).as("held by the holder").isEmpty();
            long crashed = System.nanoTime();
            fixture.crash(holder);
            try (Lease next = waiter.lock(name).acquire(Duration.ofSeconds(30))) {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - crashed);
                System.out.printf("[%s] crash of holder to next grant: %d ms (lease %d ms, bound %d ms)%n",
                        fixture.name(), ms, lease.toMillis(), deadHolderBound(lease).toMillis());
                assertThat(ms).as("crash to next grant, ms").isLessThanOrEqualTo(deadHolderBound(lease).toMillis());
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }

    /**
     * A renewed lease is never lost and never granted to another client, for five times its lease time (fifteen
     * renewals).
     *
     * <p>{@code isValid()} is honest about time: it turns false the moment the local deadline passes without a
     * renewal's answer, which happens on a healthy server whenever one renewal's round trip (a commit's {@code fsync}
     * on a busy disk, say) outlasts the lease time less the renewal interval and the drift margin: about 0.65 s with
     * this test's 1 s lease. That is the machine's timing, not a broken renewal, so a sample that finds the lease not
     * valid is not a failure by itself; the lease must then become valid again, by the late answer or by the renewal
     * of the overdue lease, without being reported lost. A renewal that does not work fails all the same: the lease is
     * reported lost, or the server frees it and the other client gets it.
     */
    @Test
    void renewalKeepsALeaseAliveForFiveTimesItsLeaseTime() throws Exception {
        String name = unique("renew");
        Duration lease = Duration.ofSeconds(1);
        try (LockClient a = fixture.newClient(ClientConfig.lease(lease)); LockClient b = client()) {
            AtomicInteger lost = new AtomicInteger();
            int lateSamples = 0;
            try (Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
                held.onLost(e -> lost.incrementAndGet());
                long end = System.nanoTime() + lease.multipliedBy(5).toNanos();
                while (System.nanoTime() < end) {
                    if (!held.isValid()) {
                        lateSamples++;
                        await().atMost(lease.multipliedBy(5)).until(() -> held.isValid() || lost.get() > 0);
                    }
                    assertThat(lost).as("times reported lost while renewed").hasValue(0);
                    assertThat(b.lock(name).tryAcquire()).as("another client while renewed").isEmpty();
                    Thread.sleep(150);
                }
                held.checkValid();
                assertThat(lost).hasValue(0);
            }
            if (lateSamples > 0) {
                System.out.printf("[%s] renewal: %d sample(s) found the lease past its local deadline until a late"
                        + " renewal answered%n", fixture.name(), lateSamples);
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
}
