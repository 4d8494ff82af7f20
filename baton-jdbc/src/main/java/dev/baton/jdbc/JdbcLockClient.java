package dev.baton.jdbc;

import dev.baton.LockClient;

import java.time.Duration;

/** A {@link LockClient} on the JDBC lease table, with the table's maintenance operations. */
public interface JdbcLockClient extends LockClient {

    /** The dialect in use. */
    Dialect dialect();

    /** The lease table's name. */
    String tableName();

    /**
     * Deletes rows whose lease ended more than {@code olderThan} ago (the "cleanup job"). A live lease has
     * {@code expires_at} in the future by the database clock, so it can never match; fencing tokens come
     * from a database-wide sequence, so they keep increasing per lock after a row is purged.
     *
     * @return the number of rows deleted
     * @throws IllegalArgumentException if {@code olderThan} is null or shorter than one second
     * @throws dev.baton.LockBackendException if the database could not be reached
     */
    int purgeExpired(Duration olderThan);
}
