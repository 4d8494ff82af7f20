package dev.baton.spi;

import dev.baton.LockClient;
import dev.baton.LockObserver;

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
    /**
     * Longest lease time (and renewal interval): 7 days. A holder that vanishes without releasing keeps its
     * locks for up to one lease time, so a longer lease is an outage, not a setting; and every lease time
     * must stay far inside each database's interval and timestamp arithmetic and the client's nanosecond
     * deadlines (a {@code long} of nanoseconds ends after 292 years).
     */
    public static final Duration MAX_LEASE_TIME = Duration.ofDays(7);
    /** Shortest lease time: 100 ms. */
    public static final Duration MIN_LEASE_TIME = Duration.ofMillis(100);
    /** Longest poll interval of a waiter: 1 h. A longer poll only delays a waiter that no notification reaches. */
    public static final Duration MAX_POLL_INTERVAL = Duration.ofHours(1);
    /**
     * Default clock drift factor: 1 % of the lease time (Redlock's), so 102 ms of a 10 s lease. NTP slews a clock by
     * at most 500 ppm (0.05 %), and crystal oscillators drift by tens of ppm: 1 % covers either clock running fast
     * twenty times over, and costs a lease only 1 % of its local validity. A clock that is <em>stepped</em> is not
     * covered by any margin; the renewal check ({@link ReportsTimeLeft}) is what notices that.
     */
    public static final double DEFAULT_CLOCK_DRIFT_FACTOR = 0.01;
    /** Largest clock drift factor: 0.5. Beyond it a lease would be valid locally for less than half its time. */
    public static final double MAX_CLOCK_DRIFT_FACTOR = 0.5;

    private Duration leaseTime = DEFAULT_LEASE_TIME;
    private Duration renewInterval;
    private Duration minPollInterval = DEFAULT_MIN_POLL;
    private Duration maxPollInterval = DEFAULT_MAX_POLL;
    private String clientIdPrefix;
    private LongSupplier ticker = System::nanoTime;
    private double clockDriftFactor = DEFAULT_CLOCK_DRIFT_FACTOR;
    private LockObserver observer = LockObserver.NONE;

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * The lease each grant and renewal gives, by the server's clock (default 10 s). A live holder renews
     * it, so this bounds how long a dead holder keeps the lock; at least 100 ms, at most
     * {@link #MAX_LEASE_TIME} (7 days).
     *
     * @throws IllegalArgumentException if null or out of those bounds (the message names both)
     */
    public B leaseTime(Duration leaseTime) {
        this.leaseTime = within("leaseTime", leaseTime, MIN_LEASE_TIME, MAX_LEASE_TIME,
                "a holder that vanishes keeps its locks for up to one lease time");
        return self();
    }

    /**
     * How often held leases are renewed, in one batch (default: a third of the lease time); at least 10 ms,
     * shorter than the lease time.
     */
    public B renewInterval(Duration renewInterval) {
        this.renewInterval = within("renewInterval", renewInterval, Duration.ofMillis(10), MAX_LEASE_TIME,
                "it must be shorter than the lease time, itself at most 7 days");
        return self();
    }

    /** The first backoff of a waiter that was not woken by a notification (default 10 ms; 1 ms to 1 h). */
    public B minPollInterval(Duration minPollInterval) {
        this.minPollInterval = within("minPollInterval", minPollInterval, Duration.ofMillis(1), MAX_POLL_INTERVAL,
                "a longer poll only delays a waiter that no notification reaches");
        return self();
    }

    /** The cap of a waiter's exponential backoff poll (default 500 ms; 1 ms to 1 h). */
    public B maxPollInterval(Duration maxPollInterval) {
        this.maxPollInterval = within("maxPollInterval", maxPollInterval, Duration.ofMillis(1), MAX_POLL_INTERVAL,
                "a longer poll only delays a waiter that no notification reaches");
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

    /**
     * How fast the server's clock may run against this client's, as a fraction of the lease time (default
     * {@value #DEFAULT_CLOCK_DRIFT_FACTOR}, Redlock's). A lease is valid locally until the monotonic time its request
     * was sent + {@code leaseTime - (leaseTime x factor + 2 ms)}, so {@code isValid()} turns false before the server
     * frees the lock even if the server's clock runs that much fast (the 2 ms cover Redis's millisecond expiries).
     * 0 keeps only the 2 ms. A server clock that is stepped forward is not covered by any factor: see docs/OPERATIONS.md
     * (Clocks) for what each backend notices then.
     *
     * @throws IllegalArgumentException if not a number, negative or above {@value #MAX_CLOCK_DRIFT_FACTOR} (the
     *                                  message names the setting and the value); at {@link #build()}, if the lease's
     *                                  local validity that leaves is not longer than the renewal interval
     */
    public B clockDriftFactor(double factor) {
        checkClockDriftFactor(factor);
        this.clockDriftFactor = factor;
        return self();
    }

    /**
     * The observer told what the client does: acquisitions and their outcome, grants, releases, losses, renewals
     * (default none: the client then makes no such call). For metrics, {@code baton-micrometer}'s
     * {@code BatonMetrics}. One per client: combine several in one {@link LockObserver} of your own.
     *
     * @throws IllegalArgumentException if null
     * @throws IllegalStateException    if an observer was already set (the message names it)
     */
    public B observer(LockObserver observer) {
        if (observer == null) {
            throw new IllegalArgumentException("observer must not be null");
        }
        if (this.observer != LockObserver.NONE) {
            throw new IllegalStateException("observer was already set to " + this.observer
                    + "; a client has one observer: combine several in one LockObserver");
        }
        this.observer = observer;
        return self();
    }

    static void checkClockDriftFactor(double factor) {
        if (!(factor >= 0 && factor <= MAX_CLOCK_DRIFT_FACTOR)) {
            throw new IllegalArgumentException("clockDriftFactor must be from 0 to " + MAX_CLOCK_DRIFT_FACTOR
                    + " (a fraction of the lease time; default " + DEFAULT_CLOCK_DRIFT_FACTOR + "), was " + factor);
        }
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
        return new ClientSettings(leaseTime, renew, minPollInterval, maxPollInterval, clientIdPrefix, ticker,
                clockDriftFactor, observer);
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

    /**
     * As {@link #positive}, and at most {@code max}; the message names the setting, the value, the bound and
     * {@code why} (for example {@code "leaseTime must be at most 7 days (PT168H), was PT3000000H: …"}). Every
     * duration setting needs an upper bound: past it, conversions to nanoseconds or database intervals
     * overflow.
     *
     * @throws IllegalArgumentException otherwise
     */
    public static Duration within(String what, Duration value, Duration min, Duration max, String why) {
        positive(what, value, min);
        if (value.compareTo(max) > 0) {
            throw new IllegalArgumentException(what + " must be at most " + human(max) + " (" + max + "), was "
                    + value + ": " + why);
        }
        return value;
    }

    /** "7 days", "1 h", "32767 s", "500 ms": the largest whole unit. */
    private static String human(Duration d) {
        if (d.toMillis() % 86_400_000 == 0) {
            long days = d.toDays();
            return days == 1 ? "1 day" : days + " days";
        }
        if (d.toMillis() % 3_600_000 == 0) {
            return d.toHours() + " h";
        }
        if (d.toMillis() % 1000 == 0) {
            return d.toSeconds() + " s";
        }
        return d.toMillis() + " ms";
    }
}
