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
    }
}
