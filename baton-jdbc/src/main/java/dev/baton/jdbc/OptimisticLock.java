package dev.baton.jdbc;

/**
 * A version number kept per name, for optimistic read-merge-write of a record: no lock is held while the work
 * runs; instead the write commits only if nobody committed a new version since this attempt read it, and
 * otherwise the attempt is rolled back and run again. Not re-entrant (nothing is held), not fair (a busy
 * writer can lose many times). The version is the fencing token: it strictly increases with every committed
 * update.
 *
 * <p>Pick it for records that are read often, written now and then and rarely by two writers at once; for
 * hot records, a lock that queues writers ({@link JdbcLockClient#inTransaction}) wastes less work.
 *
 * <p>Obtained from {@link JdbcLockClient#optimistic(String)}. Thread safety: may be used from any thread.
 */
public interface OptimisticLock {

    /** The name. */
    String name();

    /**
     * Runs one read-merge-write, retrying on conflict. Each attempt, on a connection of its own from the pool:
     * begins a transaction, reads the version (creating the row at version 1 if absent), runs {@code work},
     * then {@code UPDATE … SET version = version + 1 WHERE name = ? AND version = ?}. One row updated: commit
     * and return. No row (another writer committed first), or a serialization failure or deadlock: roll back,
     * wait a jittered, exponentially growing backoff (5 ms doubling to 200 ms) and try again.
     *
     * @param maxAttempts at least 1: how many times the work may run
     * @param work        the read-merge-write; see {@link VersionedWork}
     * @return what the successful attempt's work returned
     * @throws IllegalArgumentException             if {@code maxAttempts} is below 1 or {@code work} is null
     * @throws dev.baton.OptimisticConflictException if every attempt lost to a concurrent writer; it carries
     *                                              the attempts made and the last version read
     * @throws dev.baton.LockBackendException        if the database failed or the work threw another
     *                                              {@link java.sql.SQLException} (the cause); rolled back
     * @throws dev.baton.LockInterruptedException    if interrupted during a backoff (the flag is set again)
     * @throws RuntimeException                     whatever the work threw, after rolling back
     */
    <T> T update(int maxAttempts, VersionedWork<T> work);

    /**
     * The current committed version, or 0 if no update or read ever created the row.
     *
     * @throws dev.baton.LockBackendException if the database could not be reached
     */
    long version();
}
