package dev.baton.spi;

import dev.baton.LockClient;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * The settings every backend's builder shares. Each setter checks its argument at once and names it in the
 * message; {@link #build()} copies them into an immutable {@link ClientSettings}.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class AbstractClientBuilder<B extends AbstractClientBuilder<B>> {
    /** Default lease time: short, because a live holder renews it and a dead one frees the lock soon. */
    public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(10);
    /** Default first backoff of a waiter's poll. */
    public static final Duration DEFAULT_MIN_POLL = Duration.ofMillis(10);
    /** Default cap of a waiter's backoff poll. */
    public static final Duration DEFAULT_MAX_POLL = Duration.ofMillis(500);

    private Duration leaseTime = DEFAULT_LEASE_TIME;
    private Duration renewInterval;
    private Duration minPollInterval = DEFAULT_MIN_POLL;
    private Duration maxPollInterval = DEFAULT_MAX_POLL;
    private String clientIdPrefix;
    private LongSupplier ticker = System::nanoTime;

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * The lease each grant and renewal gives, by the server's clock (default 10 s). A live holder renews
     * it, so this bounds how long a dead holder keeps the lock; at least 100 ms.
     */
    public B leaseTime(Duration leaseTime) {
        this.leaseTime = positive("leaseTime", leaseTime, Duration.ofMillis(100));
        return self();
    }

    /** How often held leases are renewed, in one batch (default: a third of the lease time). */
    public B renewInterval(Duration renewInterval) {
        this.renewInterval = positive("renewInterval", renewInterval, Duration.ofMillis(10));
        return self();
    }

    /** The first backoff of a waiter that was not woken by a notification (default 10 ms). */
    public B minPollInterval(Duration minPollInterval) {
        this.minPollInterval = positive("minPollInterval", minPollInterval, Duration.ofMillis(1));
        return self();
    }

    /** The cap of a waiter's exponential backoff poll (default 500 ms). */
    public B maxPollInterval(Duration maxPollInterval) {
        this.maxPollInterval = positive("maxPollInterval", maxPollInterval, Duration.ofMillis(1));
        return self();
    }

    /** A prefix for this client's id, shown in introspection (default: host name). At most 64 characters. */
    public B clientIdPrefix(String prefix) {
        if (prefix == null || prefix.isBlank()) {
            throw new IllegalArgumentException("clientIdPrefix must not be null or blank");
        }
        if (prefix.length() > 64) {
            throw new IllegalArgumentException("clientIdPrefix is " + prefix.length() + " characters; at most 64");
        }
        this.clientIdPrefix = prefix;
        return self();
    }

    /** The monotonic clock in nanoseconds used for local deadlines (default {@code System::nanoTime}). */
    public B ticker(LongSupplier ticker) {
        if (ticker == null) {
            throw new IllegalArgumentException("ticker must not be null");
        }
        this.ticker = ticker;
        return self();
    }

    /** The validated settings. */
    protected ClientSettings settings() {
        Duration renew = renewInterval != null ? renewInterval : leaseTime.dividedBy(3);
        if (renew.compareTo(leaseTime) >= 0) {
            throw new IllegalArgumentException("renewInterval (" + renew.toMillis()
                    + " ms) must be shorter than leaseTime (" + leaseTime.toMillis() + " ms)");
        }
        if (minPollInterval.compareTo(maxPollInterval) > 0) {
            throw new IllegalArgumentException("minPollInterval (" + minPollInterval.toMillis()
                    + " ms) must not exceed maxPollInterval (" + maxPollInterval.toMillis() + " ms)");
        }
        return new ClientSettings(leaseTime, renew, minPollInterval, maxPollInterval, clientIdPrefix, ticker);
    }

    /** Builds the client. */
    public abstract LockClient build();

    /**
     * Checks a duration setting: not null, positive, at least {@code min}; the message names the setting.
     * For backend builders' own settings too.
     *
     * @throws IllegalArgumentException otherwise
     */
    protected static Duration positive(String what, Duration value, Duration min) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + value);
        }
        if (value.compareTo(min) < 0) {
            throw new IllegalArgumentException(what + " must be at least " + min.toMillis() + " ms, was "
                    + value.toMillis() + " ms");
        }
        return value;
    }
}
