package dev.baton.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The backend-independent settings of a client, validated by {@link AbstractClientBuilder}.
 *
 * @param leaseTime       the lease granted per acquisition and per renewal, by the server's clock
 * @param renewInterval   how often the client renews all its leases in one batch
 * @param minPollInterval the first backoff when a waiter polls
 * @param maxPollInterval the cap of the backoff poll between attempts while waiting
 * @param clientIdPrefix  a prefix for the client id, or {@code null} for {@code host/pid}
 * @param ticker          the monotonic clock, in nanoseconds ({@code System::nanoTime} by default)
 */
public record ClientSettings(Duration leaseTime, Duration renewInterval, Duration minPollInterval,
                             Duration maxPollInterval, String clientIdPrefix, LongSupplier ticker) {
    public ClientSettings {
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(renewInterval, "renewInterval");
        Objects.requireNonNull(minPollInterval, "minPollInterval");
        Objects.requireNonNull(maxPollInterval, "maxPollInterval");
        Objects.requireNonNull(ticker, "ticker");
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
    }
}
