package dev.baton.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One attempt of an optimistic read-merge-write, run by {@link OptimisticLock#update}. It may run several
 * times (once per attempt), each time in a fresh transaction that is rolled back if another writer committed
 * a new version meanwhile, so it must not have effects outside the given connection.
 *
 * @param <T> the result
 */
@FunctionalInterface
public interface VersionedWork<T> {

    /**
     * @param connection the connection of this attempt's transaction; do not commit, roll back, change
     *                   auto-commit or close it (those calls are refused)
     * @param version    the version read at the start of this attempt; the update succeeds only if it is still
     *                   the current version at the end, which then becomes {@code version + 1}
     * @return the result handed back by {@code update} after a successful commit
     * @throws SQLException to roll back and end the update (wrapped in a {@link dev.baton.LockBackendException}),
     *                      unless it is a serialization failure or deadlock, which counts as a lost attempt
     */
    T apply(Connection connection, long version) throws SQLException;
}
