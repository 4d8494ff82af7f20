package dev.baton.checker;

import dev.baton.LockClient;
import dev.baton.jdbc.JdbcLockClient;

import java.time.Duration;

/**
 * {@code --strategy run-once}: scheduled-task semantics, {@link JdbcLockClient#runOnce}, on the lease table.
 * Each worker calls {@code runOnce(name, atMostFor, atLeastFor, task)} on a schedule; the task tells the
 * resource server when it starts and ends. With lease time L under test, {@code atMostFor} is L and
 * {@code atLeastFor} is L/4; tasks take 100–400 ms (at most 2/5 of L). The checks ({@link Analysis}) are, by the resource
 * server's clock and the runners' own histories:
 * <ul>
 *   <li>(a) no overlap: no run of a name starts while an earlier run of it, started less than
 *       {@code atMostFor} after its {@code runOnce} call, is still running;</li>
 *   <li>(b) atLeastFor: no run of a name starts less than {@code atLeastFor} after the previous run's
 *       {@code runOnce} call (its grant came after the call, so this is a lower bound the row must keep);</li>
 *   <li>(c) liveness: a call told the name is taken can be explained by a call of it under way less than
 *       {@code atMostFor} (+ margin) before — a row never outlives {@code atMostFor} — and no call by a
 *       worker no fault touched ends in an error;</li>
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

    @Override
    public String name() {
        return "run-once";
    }

    /** {@code runOnce} never waits in line. */
    @Override
    public java.util.Optional<Duration> deadPlaceBound(Duration leaseTime) {
        return java.util.Optional.empty();
    }

    /**
     * One call of {@code runOnce} on the client this strategy made; test variants may override it.
     *
     * @return whether the task ran
     */
    protected boolean runOnce(LockClient client, String name, Duration atMostFor, Duration atLeastFor, Runnable task) {
        return ((JdbcLockClient) client).runOnce(name, atMostFor, atLeastFor, task);
    }
}
