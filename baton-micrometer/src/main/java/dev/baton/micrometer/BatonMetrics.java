package dev.baton.micrometer;

import dev.baton.LockLostException;
import dev.baton.LockObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Micrometer meters, and optionally an {@link Observation} per acquisition, for any Baton client: a
 * {@link LockObserver} you set on the client's builder.
 *
 * <pre>{@code
 * BatonMetrics metrics = BatonMetrics.builder(meterRegistry).build();
 * LockClient locks = JdbcLocks.builder(dataSource).observer(metrics).build();
 * }</pre>
 *
 * <p>The meters (every one tagged {@code backend}, the backend's kind such as {@code jdbc-lease/postgresql},
 * {@code redis}, {@code zookeeper}, {@code in-memory}):
 * <ul>
 *   <li>{@value #ACQUIRE} (timer; tags {@code lock}, {@code outcome}: {@code granted} / {@code busy} /
 *       {@code timeout} / {@code error}, {@code exception}: the exception's simple class name or {@code none}) —
 *       every acquisition call, from its start to its return, re-entrant ones included;</li>
 *   <li>{@value #ACQUIRE_WAIT} (timer; tags {@code lock}, {@code outcome}) — of acquisitions whose first attempt
 *       found the lock busy and that then waited: from that answer to the end;</li>
 *   <li>{@value #LEASES_HELD} (gauge; tag {@code lock}) — grants held now by the clients this object observes
 *       (granted, not yet released nor lost);</li>
 *   <li>{@value #LEASE_DURATION} (timer; tags {@code lock}, {@code lost}: {@code true} / {@code false}) — from grant
 *       to release;</li>
 *   <li>{@value #LEASES_LOST} (counter; tags {@code lock}, {@code cause}: {@code deadline} / {@code not_on_server} /
 *       {@code clock_jump} / {@code session_lost} / {@code client_closed}) — leases lost;</li>
 *   <li>{@value #RENEWALS} (counter; tag {@code result}: {@code ok} / {@code failed}) — leases renewed, counted one
 *       per lease per renewal round.</li>
 * </ul>
 *
 * <p><b>The {@code lock} tag is bounded</b>, so lock names made of ids cannot grow the number of time series without
 * end: each name goes through a mapping (default: the name itself; for example strip an id with
 * {@code name -> name.replaceAll(":\\d+$", ":*")}), and only the first {@link Builder#maxLockNames} distinct tag
 * values (default {@value #DEFAULT_MAX_LOCK_NAMES}) are kept; every later one becomes {@value #OTHER}.
 *
 * <p><b>Tracing.</b> Given an {@link ObservationRegistry}, each acquisition is also an {@link Observation} named
 * {@value #OBSERVATION} (low-cardinality keys {@code backend}, {@code lock}, {@code outcome}; high-cardinality
 * {@code lock.name}, the full name), started and stopped on the acquiring thread with its scope open meanwhile, so
 * database or Redis spans of the acquisition become its children. Its name differs from {@value #ACQUIRE} so that a
 * registry which also turns observations into timers does not clash with this class's own timer.
 *
 * <p>Make <b>one instance per {@link MeterRegistry}</b> and give it to every client: Micrometer keeps the first gauge
 * registered under a name and tags, so a second instance's {@value #LEASES_HELD} on the same registry would be
 * ignored (it logs a warning).
 *
 * <p>Thread safety: one instance may observe any number of clients from any threads.
 */
public final class BatonMetrics implements LockObserver {
    /** Timer of acquisition calls. */
    public static final String ACQUIRE = "baton.acquire";
    /** Timer of the wait behind another holder. */
    public static final String ACQUIRE_WAIT = "baton.acquire.wait";
    /** Gauge of grants held now. */
    public static final String LEASES_HELD = "baton.leases.held";
    /** Timer from grant to release. */
    public static final String LEASE_DURATION = "baton.lease.duration";
    /** Counter of leases lost. */
    public static final String LEASES_LOST = "baton.leases.lost";
    /** Counter of lease renewals. */
    public static final String RENEWALS = "baton.renewals";
    /** The name of the {@link Observation} of an acquisition. */
    public static final String OBSERVATION = "baton.lock.acquire";
    /** The {@code lock} tag of every name past the cap. */
    public static final String OTHER = "_other";
    /** Default cap of distinct {@code lock} tag values. */
    public static final int DEFAULT_MAX_LOCK_NAMES = 100;

    private final MeterRegistry registry;
    private final ObservationRegistry observations;
    private final LockNameTags lockTags;
    private final Map<String, String> backendTags = new ConcurrentHashMap<>();
    private final Map<Tags, AtomicInteger> held = new ConcurrentHashMap<>();
    private final Meter.MeterProvider<Timer> acquire;
    private final Meter.MeterProvider<Timer> acquireWait;
    private final Meter.MeterProvider<Timer> leaseDuration;
    private final Meter.MeterProvider<Counter> lost;
    private final Meter.MeterProvider<Counter> renewals;

    private BatonMetrics(Builder b) {
        this.registry = b.registry;
        this.observations = b.observations;
        this.lockTags = new LockNameTags(b.lockNameTag, b.maxLockNames);
        this.acquire = Timer.builder(ACQUIRE).description("Baton lock acquisitions, by outcome")
                .withRegistry(registry);
        this.acquireWait = Timer.builder(ACQUIRE_WAIT)
                .description("How long Baton acquisitions waited behind another holder").withRegistry(registry);
        this.leaseDuration = Timer.builder(LEASE_DURATION).description("How long Baton leases were held")
                .withRegistry(registry);
        this.lost = Counter.builder(LEASES_LOST).description("Baton leases lost, by cause").withRegistry(registry);
        this.renewals = Counter.builder(RENEWALS).description("Baton lease renewals, one per lease per round")
                .withRegistry(registry);
    }

    /**
     * A builder of meters in {@code registry}.
     *
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public static Builder builder(MeterRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        return new Builder(registry);
    }

    /** The backend tag of a client's {@code backend()} description: its kind, before any parenthesis. */
    static String backendTag(String description) {
        int paren = description.indexOf(" (");
        return paren < 0 ? description : description.substring(0, paren);
    }

    private String backend(String description) {
        return backendTags.computeIfAbsent(description, BatonMetrics::backendTag);
    }

    @Override
    public Acquisition acquireStarted(String backend, String lockName, boolean waits) {
        String b = backend(backend);
        String lock = lockTags.tag(lockName);
        if (observations == null || observations.isNoop()) {
            return (outcome, latency, waited, error) -> record(b, lock, outcome, latency, waited, error);
        }
        Observation observation = Observation.createNotStarted(OBSERVATION, observations)
                .contextualName("baton acquire " + lock)
                .lowCardinalityKeyValue("backend", b)
                .lowCardinalityKeyValue("lock", lock)
                .highCardinalityKeyValue("lock.name", lockName)
                .start();
        Observation.Scope scope = observation.openScope();
        return (outcome, latency, waited, error) -> {
            try {
                record(b, lock, outcome, latency, waited, error);
                observation.lowCardinalityKeyValue("outcome", lower(outcome));
                if (error != null) {
                    observation.error(error);
                }
            } finally {
                scope.close();
                observation.stop();
            }
        };
    }

    private void record(String backend, String lock, Outcome outcome, Duration latency, Duration waited,
                        Throwable error) {
        String o = lower(outcome);
        acquire.withTags("backend", backend, "lock", lock, "outcome", o,
                "exception", error == null ? "none" : error.getClass().getSimpleName()).record(latency);
        if (!waited.isZero()) {
            acquireWait.withTags("backend", backend, "lock", lock, "outcome", o).record(waited);
        }
    }

    @Override
    public void leaseGranted(String backend, String lockName, long fencingToken) {
        heldCount(backend(backend), lockTags.tag(lockName)).incrementAndGet();
    }

    @Override
    public void leaseReleased(String backend, String lockName, Duration heldFor, boolean wasLost) {
        String b = backend(backend);
        String lock = lockTags.tag(lockName);
        if (!wasLost) {
            heldCount(b, lock).decrementAndGet();
        }
        leaseDuration.withTags("backend", b, "lock", lock, "lost", Boolean.toString(wasLost)).record(heldFor);
    }

    @Override
    public void leaseLost(String backend, String lockName, LossCause cause, LockLostException reason) {
        String b = backend(backend);
        String lock = lockTags.tag(lockName);
        heldCount(b, lock).decrementAndGet();
        lost.withTags("backend", b, "lock", lock, "cause", lower(cause)).increment();
    }

    @Override
    public void renewed(String backend, int renewed, int failed, Duration took) {
        String b = backend(backend);
        if (renewed > 0) {
            renewals.withTags("backend", b, "result", "ok").increment(renewed);
        }
        if (failed > 0) {
            renewals.withTags("backend", b, "result", "failed").increment(failed);
        }
    }

    private AtomicInteger heldCount(String backend, String lock) {
        Tags tags = Tags.of("backend", backend, "lock", lock);
        AtomicInteger count = held.get(tags);
        if (count != null) {
            return count;
        }
        return held.computeIfAbsent(tags, t -> {
            AtomicInteger c = new AtomicInteger();
            Gauge.builder(LEASES_HELD, c, AtomicInteger::get).tags(t).strongReference(true)
                    .description("Baton leases held now (granted, not released nor lost)").register(registry);
            return c;
        });
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "BatonMetrics[" + registry.getClass().getSimpleName() + ", lock tags " + lockTags + "]";
    }

    /** Settings of {@link BatonMetrics}. */
    public static final class Builder {
        private final MeterRegistry registry;
        private ObservationRegistry observations;
        private Function<String, String> lockNameTag = Function.identity();
        private int maxLockNames = DEFAULT_MAX_LOCK_NAMES;

        private Builder(MeterRegistry registry) {
            this.registry = registry;
        }

        /**
         * Maps a lock name to its {@code lock} tag value (default: the name itself). A mapping that returns null
         * gives {@value #OTHER}. The cap of {@link #maxLockNames} applies to the mapped values.
         *
         * @throws IllegalArgumentException if null
         */
        public Builder lockNameTag(Function<String, String> mapping) {
            if (mapping == null) {
                throw new IllegalArgumentException("lockNameTag mapping must not be null");
            }
            this.lockNameTag = mapping;
            return this;
        }

        /**
         * How many distinct {@code lock} tag values are kept (default {@value #DEFAULT_MAX_LOCK_NAMES}); every later
         * one becomes {@value #OTHER}. 0 tags every lock {@value #OTHER}.
         *
         * @throws IllegalArgumentException if negative or above 10,000
         */
        public Builder maxLockNames(int max) {
            if (max < 0 || max > 10_000) {
                throw new IllegalArgumentException("maxLockNames must be from 0 to 10000 (each is a set of time series"
                        + " per meter), was " + max);
            }
            this.maxLockNames = max;
            return this;
        }

        /**
         * Also makes each acquisition an {@link Observation} named {@value #OBSERVATION} in this registry (default:
         * none).
         *
         * @throws IllegalArgumentException if null
         */
        public Builder observationRegistry(ObservationRegistry observations) {
            if (observations == null) {
                throw new IllegalArgumentException("observationRegistry must not be null");
            }
            this.observations = observations;
            return this;
        }

        /** The observer, to pass to a client builder's {@code observer(...)}. */
        public BatonMetrics build() {
            return new BatonMetrics(this);
        }
    }
}
