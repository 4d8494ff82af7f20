package dev.baton.checker;

import dev.baton.LockClient;

import java.time.Duration;

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
     * How long after a holder dies, stalls or is cut off the strategy promises the lock to a waiter, before
     * the checker's scheduling margin: for a lease, the lease time plus the waiter's longest poll.
     */
    Duration handOverBound(Duration leaseTime);
}
