package dev.baton.jdbc;

import dev.baton.LockClientClosedException;
import dev.baton.jdbc.lease.LeaseTable;
import dev.baton.jdbc.optimistic.OptimisticStrategy;
import dev.baton.jdbc.rowlock.RowLockStrategy;
import dev.baton.jdbc.scheduled.ScheduledRuns;

import javax.sql.DataSource;
import java.time.Duration;

/**
 * The strategies of a {@link JdbcLockClient} that run per call on a borrowed connection rather than through
 * the core: the transaction row lock, the optimistic version and scheduled runs. They hold no connection or
 * thread between calls; closing the client only makes further calls fail.
 *
 * <p>Part of the facade, with {@link JdbcLocks}: its one job is assembling these strategies, so it is one of the
 * root classes that may refer to the strategy packages (PackageCyclesTest); the API types refer to none.
 */
final class TransactionStrategies {
    private final String clientId;
    private final String backend;
    private final RowLockStrategy rowLocks;
    private final OptimisticStrategy optimistic;
    private final ScheduledRuns scheduled;
    private volatile boolean closed;

    /**
     * @param createTables whether the strategies' tables may be created on first use from the shipped DDL
     *                     ({@code schema/<dialect>-rowlocks.sql}, {@code schema/<dialect>-versions.sql})
     */
    TransactionStrategies(DataSource dataSource, LeaseTable leaseTable, String clientId, boolean createTables) {
        this.clientId = clientId;
        this.backend = "jdbc/" + leaseTable.dialect().id() + " (table " + leaseTable.table() + ")";
        this.rowLocks = new RowLockStrategy(dataSource, leaseTable.dialect(), leaseTable.table(), clientId, createTables);
        this.optimistic = new OptimisticStrategy(dataSource, leaseTable.dialect(), leaseTable.table(), createTables);
        this.scheduled = new ScheduledRuns(dataSource, leaseTable, clientId);
    }

    private void checkOpen() {
        if (closed) {
            throw new LockClientClosedException("lock client " + clientId + " on " + backend + " is closed");
        }
    }

    <T> T inTransaction(String name, Duration wait, TransactionWork<T> work) {
        checkOpen();
        return rowLocks.inTransaction(name, wait, work);
    }

    OptimisticLock optimistic(String name) {
        checkOpen();
        return optimistic.lock(name);
    }

    boolean runOnce(String name, Duration atMostFor, Duration atLeastFor, Runnable task) {
        checkOpen();
        return scheduled.runOnce(name, atMostFor, atLeastFor, task);
    }

    void close() {
        closed = true;
    }
}
