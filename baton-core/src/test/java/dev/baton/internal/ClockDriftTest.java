package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockClients;
import dev.baton.spi.ReportsTimeLeft;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The lease's local validity keeps a clock drift margin (Redlock's: lease x factor + 2 ms), and a renewal that
 * finds less time left on the server than the client counted on (a server clock stepped forward) loses the lease at
 * once. Time is the test's own ticker: no timing luck.
 */
class ClockDriftTest {
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    /** Reports, for each grant it renews, the time left the test chose. */
    static final class Reporting extends CapabilitiesTest.Base implements ReportsTimeLeft {
        volatile Function<Duration, Duration> timeLeft = lease -> lease;
        final BlockingQueue<Integer> renewals = new LinkedBlockingQueue<>();

        /** Waits for {@code n} more renewals. */
        void awaitRenewals(int n) throws InterruptedException {
            renewals.clear();
            for (int i = 0; i < n; i++) {
                assertThat(renewals.poll(10, TimeUnit.SECONDS)).as("renewal %d", i + 1).isNotNull();
            }
        }

        @Override
        public Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime) {
            Map<LeaseKey, Duration> out = new HashMap<>();
            renew(leases, leaseTime).forEach(k -> out.put(k, timeLeft.apply(leaseTime)));
            renewals.add(out.size());
            return out;
        }
    }

    final class Builder extends AbstractClientBuilder<Builder> {
        final Reporting backend = new Reporting();

        Builder() {
            ticker(clock::get);
        }

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    @Test
    void theDriftMarginIsOnePercentOfTheLeasePlusTwoMillisecondsByDefault() {
        ClientSettings tenSeconds = new ClientSettings(Duration.ofSeconds(10), Duration.ofSeconds(3),
                Duration.ofMillis(10), Duration.ofMillis(500), null, System::nanoTime);
        assertThat(tenSeconds.clockDriftFactor()).isEqualTo(AbstractClientBuilder.DEFAULT_CLOCK_DRIFT_FACTOR)
                .isEqualTo(0.01);
        assertThat(tenSeconds.clockDrift()).isEqualTo(Duration.ofMillis(102));
        assertThat(tenSeconds.localValidity()).isEqualTo(Duration.ofMillis(9898));
        ClientSettings none = new ClientSettings(Duration.ofSeconds(10), Duration.ofSeconds(3),
                Duration.ofMillis(10), Duration.ofMillis(500), null, System::nanoTime, 0);
        assertThat(none.clockDrift()).as("factor 0 keeps the 2 ms of millisecond expiries").isEqualTo(Duration.ofMillis(2));
        ClientSettings half = new ClientSettings(Duration.ofSeconds(1), Duration.ofMillis(300),
                Duration.ofMillis(10), Duration.ofMillis(500), null, System::nanoTime, 0.5);
        assertThat(half.localValidity()).isEqualTo(Duration.ofMillis(498));
        ClientSettings week = new ClientSettings(AbstractClientBuilder.MAX_LEASE_TIME, Duration.ofDays(1),
                Duration.ofMillis(10), Duration.ofMillis(500), null, System::nanoTime, 0.5);
        assertThat(week.localValidity()).as("no overflow at the bounds")
                .isEqualTo(Duration.ofDays(7).dividedBy(2).minusMillis(2));
    }

    @Test
    void aLeaseIsValidUntilItsSendTimePlusTheLeaseLessTheDriftMargin() {
        try (LockClient client = new Builder().leaseTime(Duration.ofSeconds(10)).build();
             Lease lease = client.lock("drift").acquire(Duration.ofSeconds(1))) {
            clock.addAndGet(Duration.ofMillis(9898).toNanos() - 1);
            assertThat(lease.isValid()).as("1 ns before lease - (10 s x 0.01 + 2 ms)").isTrue();
            clock.addAndGet(1);
            assertThat(lease.isValid()).as("at lease - drift, 102 ms before the server's expiry").isFalse();
        }
        try (LockClient client = new Builder().leaseTime(Duration.ofSeconds(10)).clockDriftFactor(0.1).build();
             Lease lease = client.lock("drift").acquire(Duration.ofSeconds(1))) {
            clock.addAndGet(Duration.ofMillis(8998).toNanos() - 1);
            assertThat(lease.isValid()).isTrue();
            clock.addAndGet(1);
            assertThat(lease.isValid()).as("factor 0.1: 1,002 ms before the server's expiry").isFalse();
        }
    }

    @Test
    void aClockDriftFactorOutOfRangeIsRefusedNamingTheSettingAndTheValue() {
        for (double bad : new double[] {-0.01, 0.51, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> new Builder().clockDriftFactor(bad)).as("factor " + bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("clockDriftFactor must be from 0 to 0.5 (a fraction of the lease time; default 0.01),"
                            + " was " + bad);
        }
        assertThatThrownBy(() -> new ClientSettings(Duration.ofSeconds(10), Duration.ofSeconds(3),
                Duration.ofMillis(10), Duration.ofMillis(500), null, System::nanoTime, -1))
                .as("settings built without the builder are checked too")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clockDriftFactor");
        new Builder().clockDriftFactor(0).clockDriftFactor(0.5); // the bounds are accepted
    }

    @Test
    void aRenewIntervalTheDriftMarginLeavesNoRoomForIsRefusedAtBuild() {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(1)).renewInterval(Duration.ofMillis(990));
        assertThatThrownBy(b::build).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("renewInterval (990 ms) must be shorter than a lease's local validity, leaseTime (1000 ms)"
                        + " less its clock drift margin (leaseTime x clockDriftFactor 0.01 + 2 ms) = 988 ms: a lease"
                        + " would lapse before its renewal; shorten renewInterval or lower clockDriftFactor");
        b.clockDriftFactor(0);
        b.build().close(); // 998 ms of validity: room for a renewal every 990 ms
    }

    @Test
    void aRenewalThatFindsLessTimeLeftThanTheLocalDeadlineLosesTheLeaseAtOnce() throws Exception {
        Builder b = new Builder().leaseTime(Duration.ofSeconds(60)).renewInterval(Duration.ofMillis(20));
        try (LockClient client = b.build(); Lease lease = client.lock("stepped").acquire(Duration.ofSeconds(1))) {
            List<String> lost = new CopyOnWriteArrayList<>();
            CountDownLatch noticed = new CountDownLatch(1);
            lease.onLost(e -> {
                lost.add(e.getMessage());
                noticed.countDown();
            });
            // the clock stands still: the deadline is 59,398 ms ahead of every renewal's answer. A healthy server
            // has the whole lease left, or 2 ms less for its millisecond rounding; exactly the deadline is enough
            for (Duration left : List.of(Duration.ofSeconds(60), Duration.ofMillis(59_998), Duration.ofMillis(59_398))) {
                b.backend.timeLeft = lease1 -> left;
                b.backend.awaitRenewals(3);
                assertThat(lease.isValid()).as("renewed with %s left", left).isTrue();
            }
            // the server's clock stepped forward 30 s: the grant would end 30 s before the client's deadline
            b.backend.timeLeft = lease1 -> Duration.ofMillis(29_398);
            assertThat(noticed.await(10, TimeUnit.SECONDS)).as("lost at the next renewal").isTrue();
            assertThat(lease.isValid()).isFalse();
            assertThat(lost).hasSize(1);
            assertThat(lost.get(0)).contains("lease on 'stepped'").contains("the renewal found 29398 ms left")
                    .contains("30000 ms less than this client counted on (59398 ms until its local deadline)")
                    .contains("the server's clock jumped forward");
            lease.close();
            assertThat(lost).as("listeners run once").hasSize(1);
        }
    }
}
