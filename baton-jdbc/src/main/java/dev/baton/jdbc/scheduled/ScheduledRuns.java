package dev.baton.jdbc.scheduled;

import dev.baton.LockBackendException;
import dev.baton.LockNames;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.lease.LeaseTable;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.AcquireResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Scheduled-task semantics behind {@link dev.baton.jdbc.JdbcLockClient#runOnce}, on the lease table's rows (so {@code baton
 * list} shows them, and a {@code lock(name)} of the same name excludes them):
 * <ol>
 * <li>Take the row if it is free or expired, by the lease strategy's own one-step acquisition, with
 *     {@code expires_at = now + atMostFor} and a fresh fencing token; if it is held, return false at once.</li>
 * <li>If the take returned {@code atMostFor} or more after it was sent (the runner was paused, or the network
 *     held the reply), the grant may already have ended on the server and another runner may have run the task:
 *     do not run it; return false. (A pause between this check and the task's start is not caught: runOnce has
 *     no fencing for the task's own writes.)</li>
 * <li>Run the task, without renewal and without holding a connection.</li>
 * <li>Set {@code expires_at = GREATEST(now, acquired_at + atLeastFor)} where name, owner and token still match
 *     (all by the database clock), so the row stays taken at least {@code atLeastFor} after the grant. On
 *     PostgreSQL, when that frees it at once, lease-strategy waiters hear {@code NOTIFY} as for a release.</li>
 * </ol>
 * A runner that dies between 1 and 3 leaves the row to expire at {@code atMostFor}. Steps 1 and 3 commit
 * whatever the pool's auto-commit default ({@link ConnectionSupport#autoCommitted}). Step 3's SQL per dialect
 * family is in {@link ScheduledStatements}.
 */
public final class ScheduledRuns {
    private static final Logger LOG = LoggerFactory.getLogger(ScheduledRuns.class);

    private final DataSource dataSource;
    private final LeaseTable leaseTable;
    private final String clientId;
    private final DialectTraits traits;
    private final ScheduledStatements statements;
    private final String description;

    public ScheduledRuns(DataSource dataSource, LeaseTable leaseTable, String clientId) {
        this.dataSource = dataSource;
        this.leaseTable = leaseTable;
        this.clientId = clientId;
        this.traits = DialectTraits.of(leaseTable.dialect());
        this.statements = ScheduledStatements.of(leaseTable.dialect(), leaseTable.table(), leaseTable.releaseChannel());
        this.description = "jdbc-scheduled/" + leaseTable.dialect().id() + " (table " + leaseTable.table() + ")";
    }

    public     boolean runOnce(String name, Duration atMostFor, Duration atLeastFor, Runnable task) {
        LockNames.validate(name);
        check("atMostFor", atMostFor);
        check("atLeastFor", atLeastFor);
        if (atLeastFor.compareTo(atMostFor) > 0) {
            throw new IllegalArgumentException("atLeastFor (" + atLeastFor.toMillis() + " ms) must not exceed atMostFor ("
                    + atMostFor.toMillis() + " ms) for '" + name + "'");
        }
        if (task == null) {
            throw new IllegalArgumentException("task must not be null");
        }
        String owner = clientId + "#" + Thread.currentThread().getId();
        AcquireResult result;
        long[] sent = new long[1];
        try {
            result = LeaseTable.refuseSessionMarker(ConnectionSupport.autoCommitted(dataSource, traits, c -> {
                sent[0] = System.nanoTime(); // the grant ends atMostFor after the server ran the take: not before this
                return leaseTable.tryAcquire(c, name, owner, atMostFor.toMillis());
            }), name, leaseTable.table());
        } catch (SQLException e) {
            throw failure("taking '" + name + "' for at most " + atMostFor.toMillis() + " ms failed", e);
        }
        if (!(result instanceof AcquireResult.Granted granted)) {
            AcquireResult.Busy busy = (AcquireResult.Busy) result;
            LOG.debug("'{}' not run: held by {} (token {}) for {} more", name, busy.holder(), busy.token(),
                    busy.remaining());
            return false;
        }
        long token = granted.token();
        long tookNanos = System.nanoTime() - sent[0];
        if (tookNanos >= atMostFor.toNanos()) {
            LOG.warn("'{}' (token {}) not run: the take returned {} ms after it was sent, not within atMostFor ({} ms),"
                    + " so the grant may have ended and another runner may have run it", name, token,
                    tookNanos / 1_000_000, atMostFor.toMillis());
            return false;
        }
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            try {
                finish(name, owner, token, atLeastFor);
            } catch (RuntimeException f) {
                e.addSuppressed(f);
            }
            throw e;
        }
        try {
            finish(name, owner, token, atLeastFor);
        } catch (LockBackendException e) {
            // the task ran; the lock stays taken until atMostFor, which errs on the safe side
            LOG.warn("'{}' (token {}) ran, but keeping it for atLeastFor failed; it stays taken until atMostFor ({} ms"
                    + " after the grant)", name, token, atMostFor.toMillis(), e);
        }
        return true;
    }

    private void finish(String name, String owner, long token, Duration atLeastFor) {
        try {
            int kept = ConnectionSupport.autoCommitted(dataSource, traits,
                    c -> statements.keep(c, name, owner, token, atLeastFor));
            if (kept == 0) {
                LOG.warn("'{}' (token {}) ran longer than its atMostFor: another runner took it over before it ended",
                        name, token);
            }
        } catch (SQLException e) {
            throw failure("keeping '" + name + "' (token " + token + ") for at least " + atLeastFor.toMillis()
                    + " ms failed", e);
        }
    }

    private static void check(String what, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (d.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException(what + " must be at least 1 ms, was " + d
                    + " (SQLite keeps milliseconds)");
        }
        AbstractClientBuilder.within(what, d, Duration.ofMillis(1), AbstractClientBuilder.MAX_LEASE_TIME,
                "the bound of a lease: a runner that dies keeps the name until atMostFor has passed");
    }

    private LockBackendException failure(String what, SQLException e) {
        return new LockBackendException(description, what + ": " + e.getMessage() + " (SQL state " + e.getSQLState()
                + ")", e);
    }
}
