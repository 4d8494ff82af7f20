package dev.baton.checker;

import dev.baton.LockClient;

import java.time.Duration;
import java.util.Optional;

/**
 * How the checker runs one locking strategy: the one interface a new strategy (advisory session locks,
 * Redis, ZooKeeper) implements to join {@code baton check}. Chosen on the command line by
 * {@link #name()} ({@code --strategy lease}) or by the name of a class implementing it that has a public
 * no-argument constructor; the same class is then loaded in every worker JVM.
 *
 * <p>The controller calls {@link #open} once per scenario; each worker calls {@link #newClient} once per
 * process. Implementations must be stateless apart from what these calls return.
 */
public interface CheckStrategy {

    /** The name used with {@code --strategy}, such as {@code lease}. */
    String name();

    /**
     * Whether this strategy can run against the URL.
     *
     * @throws IllegalArgumentException naming the URL forms it accepts, if it cannot
     */
    void validate(String url);

    /**
     * Controller side: connects to the backend (directly, never through a fault proxy), prepares it (creates
     * the lock table, say) and returns the controller's view of it.
     *
     * @param table where the checker's locks live (a table name, a key prefix), distinct from production's
     */
    CheckBackend open(String url, String table, Duration leaseTime);

    /**
     * Worker side: a client for one worker process.
     *
     * @param url       the URL to connect to; for a network backend it points at the worker's own fault proxy
     * @param table     as given to {@link #open}
     * @param leaseTime the lease time under test
     * @param identity  the worker's identity, {@code w<index>.<generation>}: the client id prefix, and a
     *                  session name where the server shows one (PostgreSQL {@code application_name})
     */
    LockClient newClient(String url, String table, Duration leaseTime, String identity);

    /**
     * Worker side, on the given pool ({@code --pool}). The default accepts only {@link Pool#DEFAULT}.
     *
     * @throws IllegalArgumentException if the strategy does not run on that pool
     */
    default LockClient newClient(String url, String table, Duration leaseTime, String identity, Pool pool) {
        validate(url, pool);
        return newClient(url, table, leaseTime, identity);
    }

    /**
     * Why this strategy refuses a pool by design (the session strategy behind a transaction-mode pooler), or
     * empty if it promises to work on it. The checker then expects a clear refusal and reports it as such.
     */
    default Optional<String> refuses(Pool pool) {
        return Optional.empty();
    }

    /**
     * Whether this strategy can run against the URL through that pool.
     *
     * @throws IllegalArgumentException if it cannot, saying why
     */
    default void validate(String url, Pool pool) {
        validate(url);
        if (pool != Pool.DEFAULT) {
            throw new IllegalArgumentException("--pool " + pool + ": strategy " + name() + " has no pool to choose");
        }
    }

    /**
     * How long after a holder dies, stalls or is cut off the strategy promises the lock to a waiter, before
     * the checker's scheduling margin: for a lease, the lease time plus the waiter's longest poll.
     */
    Duration handOverBound(Duration leaseTime);

    /**
     * How long a free lock may be kept for the place in line of a waiter that died (check (f)), before the checker's
     * scheduling margin: the place's time to live after its last heartbeat, plus the heartbeat and the longest poll
     * of the live waiter behind it. Empty where the backend shows no line ({@link dev.baton.LockInfo#line()}): the
     * checker then cannot find a waiter to kill, and the {@code kill-waiter} fault does not apply.
     */
    default Optional<Duration> deadPlaceBound(Duration leaseTime) {
        return Optional.empty();
    }

    /**
     * When a waiter is owed the lock after a fault hit its holder (check (c)).
     *
     * @param boundFrom whether a hand-over is owed at all (a lease outlives a killed session: none is), and
     *                  if so whether its bound runs from the fault's start or from its end (the holder keeps
     *                  the lock, rightly, for as long as the fault lasts)
     * @param bound     how long after that the strategy promises the lock, before the checker's margin
     * @param why       one line for the report
     */
    record HandOver(BoundFrom boundFrom, Duration bound, String why) {
        /** Where a hand-over's bound runs from. */
        enum BoundFrom {
            /** No hand-over is owed. */
            NOT_DUE,
            /** The bound runs from the fault's start. */
            FAULT_START,
            /** The bound runs from the fault's end. */
            FAULT_END
        }

        /** No hand-over is owed. */
        public static HandOver none(String why) {
            return new HandOver(BoundFrom.NOT_DUE, Duration.ZERO, why);
        }

        /** A hand-over within {@code bound} of the fault's start. */
        public static HandOver fromFaultStart(Duration bound, String why) {
            return new HandOver(BoundFrom.FAULT_START, bound, why);
        }

        /** A hand-over within {@code bound} of the fault's end. */
        public static HandOver fromFaultEnd(Duration bound, String why) {
            return new HandOver(BoundFrom.FAULT_END, bound, why);
        }

        /** Whether a hand-over is owed at all. */
        public boolean due() {
            return boundFrom != BoundFrom.NOT_DUE;
        }

        /** Whether the bound runs from the fault's end rather than its start. */
        public boolean fromEnd() {
            return boundFrom == BoundFrom.FAULT_END;
        }
    }

    /**
     * When a waiter is owed the lock after a fault of this kind hit its holder. The default is the lease
     * strategy's: {@link #handOverBound} from the fault's start for a kill, pause or partition (from the
     * partition's end when it drops replies, since renewals still reach the server meanwhile), and nothing
     * for a session kill. A strategy whose holds end with the server session (advisory locks) owes a
     * hand-over after a session kill too; {@link #sessionKillEndsHolds} says so.
     *
     * @param fault {@code kill}, {@code pause}, {@code session-kill}, {@code partition} or {@code restart}
     * @param mode  the partition's mode ({@code blackhole}, {@code reset}, {@code drop-responses}), else the
     *              fault's own description
     */
    default HandOver handOver(String fault, String mode, Duration leaseTime) {
        Duration bound = handOverBound(leaseTime);
        if (fault.equals("session-kill")) {
            return HandOver.none("a lease outlives its sessions: no hand-over is due");
        }
        if (fault.equals("restart")) {
            return HandOver.fromFaultEnd(bound, "a lease outlives a restart: once the server is back the holder"
                    + " releases, or its lease runs out");
        }
        if (fault.equals("partition") && mode.equals("drop-responses")) {
            return HandOver.fromFaultEnd(bound, "renewals still reach the server while replies are dropped");
        }
        return HandOver.fromFaultStart(bound, "the lease runs out, then the waiter's poll");
    }

    /**
     * Whether killing a holder's server sessions ends its holds on the server at once, while the holder
     * still believes it holds (until its next renewal probe): then two attempts may both believe they hold a
     * lock after a session kill, and only fencing keeps the resource safe, as after a pause.
     */
    default boolean sessionKillEndsHolds() {
        return handOver("session-kill", "", Duration.ofSeconds(1)).due();
    }
}
