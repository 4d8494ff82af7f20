package dev.baton.spi;

import dev.baton.LockObserver;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The backend-independent settings of a client, validated by {@link AbstractClientBuilder}.
 *
 * @param leaseTime        the lease granted per acquisition and per renewal, by the server's clock
 * @param renewInterval    how often the client renews all its leases in one batch
 * @param minPollInterval  the first backoff when a waiter polls
 * @param maxPollInterval  the cap of the backoff poll between attempts while waiting
 * @param clientIdPrefix   a prefix for the client id, or {@code null} for {@code host/pid}
 * @param ticker           the monotonic clock, in nanoseconds ({@code System::nanoTime} by default)
 * @param clockDriftFactor how fast the server's clock may run against the client's, as a fraction of the lease
 *                         time kept off the local validity (see {@link #clockDrift()})
 * @param observer         told what the client does ({@link LockObserver#NONE}, the default, when null)
 */
public record ClientSettings(Duration leaseTime, Duration renewInterval, Duration minPollInterval,
                             Duration maxPollInterval, String clientIdPrefix, LongSupplier ticker,
                             double clockDriftFactor, LockObserver observer) {
    /**
     * Added to every lease's drift margin: Redis keeps expiries and reports {@code PTTL} in whole milliseconds (a
     * lease truncated to ms, a remaining time rounded down: under 2 ms together), as Redlock adds 2 ms.
     */
    public static final Duration CLOCK_DRIFT_CONSTANT = Duration.ofMillis(2);

    public ClientSettings {
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(renewInterval, "renewInterval");
        Objects.requireNonNull(minPollInterval, "minPollInterval");
        Objects.requireNonNull(maxPollInterval, "maxPollInterval");
        Objects.requireNonNull(ticker, "ticker");
        if (observer == null) {
            observer = LockObserver.NONE;
        }
        // bounded here too, for backends that build settings without the builder: the core converts them to
        // nanoseconds, which must not overflow
        AbstractClientBuilder.within("leaseTime", leaseTime, Duration.ofNanos(1), AbstractClientBuilder.MAX_LEASE_TIME,
                "a holder that vanishes keeps its locks for up to one lease time");
        AbstractClientBuilder.within("renewInterval", renewInterval, Duration.ofNanos(1),
                AbstractClientBuilder.MAX_LEASE_TIME, "it must be shorter than the lease time");
        AbstractClientBuilder.within("minPollInterval", minPollInterval, Duration.ofNanos(1),
                AbstractClientBuilder.MAX_POLL_INTERVAL, "a longer poll only delays a waiter");
        AbstractClientBuilder.within("maxPollInterval", maxPollInterval, Duration.ofNanos(1),
                AbstractClientBuilder.MAX_POLL_INTERVAL, "a longer poll only delays a waiter");
        AbstractClientBuilder.checkClockDriftFactor(clockDriftFactor);
        Duration validity = leaseTime.minus(drift(leaseTime, clockDriftFactor));
        if (renewInterval.compareTo(validity) >= 0) {
            throw new IllegalArgumentException("renewInterval (" + renewInterval.toMillis() + " ms) must be shorter"
                    + " than a lease's local validity, leaseTime (" + leaseTime.toMillis() + " ms) less its clock drift"
                    + " margin (leaseTime x clockDriftFactor " + clockDriftFactor + " + "
                    + CLOCK_DRIFT_CONSTANT.toMillis() + " ms) = " + validity.toMillis() + " ms: a lease would lapse"
                    + " before its renewal; shorten renewInterval or lower clockDriftFactor");
        }
    }

    /** Settings without an observer. */
    public ClientSettings(Duration leaseTime, Duration renewInterval, Duration minPollInterval,
                          Duration maxPollInterval, String clientIdPrefix, LongSupplier ticker,
                          double clockDriftFactor) {
        this(leaseTime, renewInterval, minPollInterval, maxPollInterval, clientIdPrefix, ticker, clockDriftFactor,
                LockObserver.NONE);
    }

    /** Settings with the {@linkplain AbstractClientBuilder#DEFAULT_CLOCK_DRIFT_FACTOR default clock drift factor}. */
    public ClientSettings(Duration leaseTime, Duration renewInterval, Duration minPollInterval,
                          Duration maxPollInterval, String clientIdPrefix, LongSupplier ticker) {
        this(leaseTime, renewInterval, minPollInterval, maxPollInterval, clientIdPrefix, ticker,
                AbstractClientBuilder.DEFAULT_CLOCK_DRIFT_FACTOR);
    }

    /**
     * The margin a lease's local validity keeps below the lease time, as Redlock's drift: {@code leaseTime x
     * clockDriftFactor +} {@link #CLOCK_DRIFT_CONSTANT}. A lease is valid locally until the (monotonic) time its
     * request was sent + {@code leaseTime - clockDrift()}: so it reports invalid before the server frees it even
     * when the server's clock runs that much fast.
     */
    public Duration clockDrift() {
        return drift(leaseTime, clockDriftFactor);
    }

    /** How long after its request was sent a grant or renewal keeps a lease valid locally: lease less drift. */
    public Duration localValidity() {
        return leaseTime.minus(clockDrift());
    }

    private static Duration drift(Duration leaseTime, double factor) {
        // leaseTime is at most 7 days (6.048e14 ns): the product is exact enough in a double and fits a long
        return Duration.ofNanos((long) Math.ceil(leaseTime.toNanos() * factor)).plus(CLOCK_DRIFT_CONSTANT);
    }
}
