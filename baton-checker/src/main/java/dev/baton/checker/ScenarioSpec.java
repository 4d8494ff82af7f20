package dev.baton.checker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One scenario: a strategy on a backend under one kind of fault.
 *
 * @param strategy  the strategy under check
 * @param url       the backend URL
 * @param table     the checker's lock table (or key prefix)
 * @param workers   worker processes
 * @param locks     locks they contend for
 * @param leaseTime the lease time under test
 * @param duration  how long faults are injected
 * @param fault     {@code kill}, {@code kill-waiter} (SIGKILL of a worker waiting in line), {@code pause},
 *                  {@code session-kill}, {@code partition}, {@code restart}, {@code failover}, {@code switchover}
 *                  (Redis Sentinel's planned failover) or {@code none}
 * @param seed      seeds the workers' and the nemesis' choices
 * @param workDir   where event logs and worker output go
 * @param fence     the resource's fence ({@link Fence#STRICT} except in the checker's own tests)
 * @param workerJvm JVM options of the workers
 * @param pool      how the workers reach the database
 * @param margin    slack added to every time bound for scheduling noise ({@link #MARGIN} unless the profile
 *                  says otherwise)
 */
public record ScenarioSpec(CheckStrategy strategy, String url, String table, int workers, int locks,
                           Duration leaseTime, Duration duration, String fault, long seed, Path workDir,
                           Fence fence, List<String> workerJvm, Pool pool, Duration margin) {
    /** The faults the checker knows. */
    public static final List<String> FAULTS = List.of("kill", "kill-waiter", "pause", "session-kill",
            "partition", "restart", "failover", "switchover", "none");
    /**
     * Faults that must hit a holder before a scenario may PASS: 5, and 1 for {@code restart} (each restart
     * hits every holder at once, and one is all a CI run can afford).
     */
    static int minHits(String fault) {
        return serverWide(fault) ? 1 : 5;
    }

    /**
     * Whether a fault cuts every worker off the server at once: {@code restart} (the server) and {@code failover}
     * (the deployment's leader, replaced by another server): one at a time, with a quiet gap after each, and a
     * hand-over owed for every lock from the fault's end.
     */
    static boolean serverWide(String fault) {
        return fault.equals("restart") || fault.equals("failover") || fault.equals("switchover");
    }

    /** A scenario on the checker's default pool. */
    public ScenarioSpec(CheckStrategy strategy, String url, String table, int workers, int locks, Duration leaseTime,
                        Duration duration, String fault, long seed, Path workDir, Fence fence, List<String> workerJvm) {
        this(strategy, url, table, workers, locks, leaseTime, duration, fault, seed, workDir, fence, workerJvm,
                Pool.DEFAULT, MARGIN);
    }
    /** Worker JVM options: small heaps, quick start, on a machine shared with other work. */
    public static final List<String> DEFAULT_WORKER_JVM = List.of("-Xmx64m", "-Xss512k", "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    /** Slack added to every time bound for scheduling noise: JVMs on a busy two-core host stall for a while. */
    public static final Duration MARGIN = Duration.ofMillis(1500);
    /**
     * The quick profile's margin: it runs in CI, on machines shared with other builds, where a worker JVM was
     * seen to stall for more than 1.5 s (a SQLite hand-over after a kill came 3.02 s after it, bound 3 s).
     */
    public static final Duration QUICK_MARGIN = Duration.ofMillis(3000);

    public ScenarioSpec {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(fence, "fence");
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(margin, "margin");
        if (!FAULTS.contains(fault)) {
            throw new IllegalArgumentException("unknown fault '" + fault + "'; known: " + FAULTS);
        }
        if (workers < 2) {
            throw new IllegalArgumentException("workers must be at least 2, was " + workers);
        }
        if (locks < 1) {
            throw new IllegalArgumentException("locks must be at least 1, was " + locks);
        }
    }

    /** How long a fault lasts: a pause 3× the lease, a partition 2×. */
    Duration faultLength() {
        return switch (fault) {
            case "pause" -> leaseTime.multipliedBy(3);
            case "partition" -> leaseTime.multipliedBy(2);
            default -> Duration.ZERO;
        };
    }

    /**
     * How long a worker waits for a lock before giving up (and logging {@code fail}): 3× the lease; with
     * {@code kill-waiter} at least twice check (f)'s bound with its margin, so a waiter stuck behind a dead place
     * stays in line long enough to show it (one that gave up and took a new place would start a new window).
     */
    Duration acquireWait() {
        Duration wait = leaseTime.multipliedBy(3);
        if (fault.equals("kill-waiter")) {
            Duration f = strategy.deadPlaceBound(leaseTime).orElse(Duration.ZERO).plus(margin).multipliedBy(2);
            return f.compareTo(wait) > 0 ? f : wait;
        }
        return wait;
    }
}
