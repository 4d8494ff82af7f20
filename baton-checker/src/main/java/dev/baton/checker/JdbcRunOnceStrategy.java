package dev.baton.checker;

import dev.baton.LockClient;
import dev.baton.jdbc.JdbcLockClient;

import java.time.Duration;

/**
 * {@code --strategy run-once}: scheduled-task semantics, {@link JdbcLockClient#runOnce}, on the lease table.
 * Each worker calls {@code runOnce(name, atMostFor, atLeastFor, task)} on a schedule; the task tells the
 * resource server when it starts and ends. With lease time L under test, {@code atMostFor} is L and
 * {@code atLeastFor} is L/4; tasks take 100–400 ms. The checks ({@link Analysis}) are, by the resource
 * server's clock and the runners' own histories:
 * <ul>
 *   <li>(a) no overlap: no run of a name starts while an earlier run of it, started less than
 *       {@code atMostFor} after its {@code runOnce} call, is still running;</li>
 *   <li>(b) atLeastFor: no run of a name starts less than {@code atLeastFor} after the previous run's
 *       {@code runOnce} call (its grant came after the call, so this is a lower bound the row must keep);</li>
 *   <li>(c) liveness: the next run of a name starts within {@code atMostFor} of the previous run's start
 *       (a runner that died or stalled frees it then), plus the runners' schedule and the checker's
 *       margin — from the end of a restart where one intervened;</li>
 *   <li>(d) never stuck: as for the lease strategy;</li>
 *   <li>(e) outcomes: a call that returned true ran its task once, a call that returned false never did.</li>
 * </ul>
 * Faults and the nemesis are the lease strategy's: the holder the backend shows is the runner (its row's
 * owner names the calling thread).
 */
public class JdbcRunOnceStrategy extends JdbcLeaseStrategy {
    /** The {@code atMostFor} of each call, for lease time L under test: L. */
    static Duration atMostFor(Duration lease) {
        return lease;
    }

    /** The {@code atLeastFor} of each call: L/4. */
    static Duration atLeastFor(Duration lease) {
        return lease.dividedBy(4);
    }

    /** The longest pause of a runner's schedule between two calls, plus a call's own round trips. */
    static final Duration SCHEDULE = Duration.ofMillis(300);

    @Override
    public String name() {
        return "run-once";
    }

    /**
     * One call of {@code runOnce} on the client this strategy made; test variants may override it.
     *
     * @return whether the task ran
     */
    protected boolean runOnce(LockClient client, String name, Duration atMostFor, Duration atLeastFor, Runnable task) {
        return ((JdbcLockClient) client).runOnce(name, atMostFor, atLeastFor, task);
    }

    @Override
    public HandOver handOver(String fault, String mode, Duration leaseTime) {
        return new HandOver(true, fault.equals("restart") || fault.equals("pause") || fault.equals("partition"),
                atMostFor(leaseTime).plus(SCHEDULE), "a runner's name is free again at most atMostFor after its grant");
    }
}
