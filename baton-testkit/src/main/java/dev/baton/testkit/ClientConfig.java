package dev.baton.testkit;

import java.time.Duration;

/**
 * How a contract test wants its client configured.
 *
 * @param leaseTime       the lease time
 * @param maxPollInterval the cap of a waiter's backoff poll
 */
public record ClientConfig(Duration leaseTime, Duration maxPollInterval) {
    /** Lease 5 s, poll cap 100 ms: fast hand-over for suites that do not test timing. */
    public static ClientConfig defaults() {
        return new ClientConfig(Duration.ofSeconds(5), Duration.ofMillis(100));
    }

    public static ClientConfig lease(Duration leaseTime) {
        return new ClientConfig(leaseTime, Duration.ofMillis(100));
    }
}
