package dev.baton.jdbc;

import dev.baton.Lease;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Work run by {@link JdbcLockClient#inTransaction} while its transaction holds the lock row.
 *
 * <p>Use only the given connection for the writes that must commit with the lock; do not commit, roll back,
 * change auto-commit or close it (those calls are refused: the transaction belongs to {@code inTransaction}).
 * Savepoints are allowed. Throw to roll everything back.
 *
 * @param <T> the result
 */
@FunctionalInterface
public interface TransactionWork<T> {

    /**
     * @param connection the connection whose open transaction holds the lock
     * @param lease      the grant: name, fencing token, holder id; valid until the transaction ends
     * @return the result handed back by {@code inTransaction}, after the commit
     * @throws SQLException to roll back; it is rethrown wrapped in a {@link dev.baton.LockBackendException}
     */
    T run(Connection connection, Lease lease) throws SQLException;
}
