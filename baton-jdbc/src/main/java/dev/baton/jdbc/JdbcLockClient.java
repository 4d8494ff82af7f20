package dev.baton.jdbc;

import dev.baton.ForcedRelease;
import dev.baton.LockClient;
import dev.baton.LockInfo;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/** A {@link LockClient} on the JDBC lease table, with the table's maintenance operations. */
public interface JdbcLockClient extends LockClient {

    /** The dialect in use. */
    Dialect dialect();

    /** The strategy in use. */
    Strategy strategy();

    /** The lease table's name. */
    String tableName();

    /**
     * Deletes rows whose lease ended more than {@code olderThan} ago (the "cleanup job"). A live lease has
     * {@code expires_at} in the future by the database clock, so it can never match; fencing tokens come
     * from a database-wide sequence, so they keep increasing per lock after a row is purged. A row counts from the
     * end of its last lease: its release, or its expiry. Also
     * deletes expired tickets of the line and, on MariaDB, the entries of {@code <table>_released} that free
     * nothing any more.
     *
     * @return the number of rows deleted
     * @throws IllegalArgumentException if {@code olderThan} is null, shorter than one second or longer than
     *                                  3650 days
     * @throws dev.baton.LockBackendException if the database could not be reached
     */
    int purgeExpired(Duration olderThan);

    /**
     * An operator's force release of a stuck lease lock ({@code baton release}): ends the grant that is live
     * on the lock's lease row now, whoever holds it, as its holder's own release would (waiters on
     * PostgreSQL are notified). With {@code token}, only the grant with that fencing token is released, so
     * a grant made after the operator looked is never ended by mistake. The holder learns at its next
     * renewal (within its renew interval) that its lease is lost; its later release or renewal cannot touch
     * a successor's grant, because both match owner and token.
     *
     * <p>Acts on the lease table only, whatever this client's strategy: a session lock lives in its holder's
     * server session and ends only with it; a read-write lock's grants are not touched.
     *
     * @param name  the lock name
     * @param token the fencing token of the grant to release, or empty for whichever grant is live
     * @return the grant released, or empty if the lock was not held (or held under another token)
     * @throws IllegalArgumentException      for an invalid name or a null token
     * @throws dev.baton.LockBackendException if the database could not be reached
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token);

    /**
     * An operator's removal of a place in a lock's line ({@code baton release NAME --waiter OWNER}): deletes the
     * ticket of {@code owner} (a waiter's id as {@link dev.baton.LockInfo#line()} shows it) in the line of
     * {@code name}, alive or dead. A dead place (its waiter died; it counts for nothing already) is simply gone; a
     * live waiter whose place is removed keeps waiting and takes a new place, at the back, at its next attempt
     * (within a heartbeat on PostgreSQL). Acts on the lease strategy's line only.
     *
     * @param name  the lock name
     * @param owner the waiter's id
     * @return the place removed, as it was just before (alive or dead), or empty if {@code owner} had no place in
     *         the line of {@code name}
     * @throws IllegalArgumentException      for an invalid name, or a null or empty owner
     * @throws dev.baton.LockBackendException if the database could not be reached
     */
    Optional<LockInfo.Waiter> removeFromLine(String name, String owner);

    /**
     * Runs {@code work} in a database transaction that holds the named lock as a row lock, so the work's writes
     * and the release commit together (the <b>transaction row-lock strategy</b>). Not re-entrant; waiters queue
     * in the database; the hold ends when the transaction ends, or when its connection dies (the server rolls
     * back). No lease time, no renewal: a dead holder's lock is freed by the server when it notices the
     * connection is gone.
     *
     * <p>On one connection borrowed from the pool for the whole call: create the name's row in
     * {@code <table>_rowlocks} if missing; begin; lock it ({@code SELECT … FOR UPDATE}) waiting at most
     * {@code wait}, bounded by the database itself: PostgreSQL {@code lock_timeout} (transaction-local) or
     * {@code NOWAIT}; MariaDB {@code FOR UPDATE WAIT n}; MySQL {@code innodb_lock_wait_timeout} (saved and put
     * back); both count whole seconds, so a wait is rounded up to the next second ({@code NOWAIT} for zero).
     * SQLite has no row locks: there the lock is {@code BEGIN IMMEDIATE}, the whole database's write lock,
     * bounded by {@code busy_timeout}, so all of SQLite's transaction locks exclude each other and every other
     * writer. Then draw a fresh fencing token (strictly greater than every earlier grant's of this name, never
     * reused after a rollback), run the work on that connection, commit if it returns, roll back if it throws.
     * PostgreSQL transactions run at READ COMMITTED (restored afterwards) so that the lock row is re-read
     * when its holder commits.
     *
     * <p>A connection that fails with a socket or query timeout, or any connection error, is closed and evicted
     * from the pool (HikariCP: {@code evictConnection}; other pools: {@link java.sql.Connection#abort}), never
     * given back for reuse, and the lease reports lost. The lock may stay held on the server until the server
     * notices (a stalled statement ends, or TCP keepalive gives up).
     *
     * <p>This lock is independent of {@link #lock(String)} of the same name (a different table).
     *
     * @param name the lock name
     * @param wait how long to wait for the row lock; {@link Duration#ZERO} tries once
     * @param work run on the locked transaction's connection; see {@link TransactionWork}
     * @return what the work returned, after the commit
     * @throws IllegalArgumentException           for an invalid name, a null or negative wait, or null work
     * @throws dev.baton.LockWaitTimeoutException  if the database ended the wait for the lock (the work did not
     *                                            run); a {@link dev.baton.LockTimeoutException}
     * @throws dev.baton.LockBackendException      if the database failed, the work threw an
     *                                            {@link java.sql.SQLException} (the cause; rolled back), or the
     *                                            commit failed (the message says whether the outcome is known)
     * @throws dev.baton.LockException             if the client is closed, or {@code <table>_rowlocks} is missing
     *                                            and may not be created
     * @throws RuntimeException                   whatever the work threw, after rolling back
     */
    <T> T inTransaction(String name, Duration wait, TransactionWork<T> work);

    /**
     * A handle for optimistic read-merge-write of the record named {@code name} (the <b>optimistic version
     * strategy</b>): versions live in {@code <table>_versions}, one row per name, created at version 1 on
     * first use. Cheap; does not contact the database.
     *
     * @throws IllegalArgumentException  for an invalid name
     * @throws dev.baton.LockException    if the client is closed
     */
    OptimisticLock optimistic(String name);

    /**
     * Runs {@code task} unless another instance ran it recently (<b>scheduled-task semantics</b>, "only one
     * machine runs the nightly job"): takes the name's lease-table row if it is free or expired, with a lease of
     * {@code atMostFor} and a fresh fencing token, and without renewal; runs the task; then keeps the row taken
     * until {@code atLeastFor} after the grant (by the database clock), so instances whose schedules are a
     * little skewed do not run a quick task twice. A runner that crashes frees the name after
     * {@code atMostFor}; a task that runs longer than {@code atMostFor} may be started by another instance
     * meanwhile, so choose it well above the task's longest run. A take that returns {@code atMostFor} or more
     * after it was sent (a paused runner) does not run the task and returns false: the grant may have ended. The row is an ordinary lease row: {@code
     * baton list} shows it, and {@link #lock(String)} of the same name excludes it.
     *
     * @param atMostFor  how long the row stays taken if the runner dies; at least 1 ms, at most 7 days (the
     *                   longest lease time)
     * @param atLeastFor how long after the grant the row stays taken even if the task ends sooner; at least
     *                   1 ms and at most {@code atMostFor}
     * @return true if this call ran the task, false if the name was taken (the task did not run)
     * @throws IllegalArgumentException for an invalid name, null task, a null or non-positive duration, a
     *                                  duration over 7 days, or {@code atLeastFor > atMostFor}
     * @throws dev.baton.LockBackendException if the database could not be reached to take the row (the task
     *                                  did not run). If only keeping it for {@code atLeastFor} fails after
     *                                  the task ran, that is logged and the row stays taken until {@code atMostFor}
     * @throws dev.baton.LockException   if the client is closed, or the name is used with the session strategy
     *                                  in this table (one name, one lock: the task did not run)
     * @throws RuntimeException         whatever the task threw, after the row was kept for {@code atLeastFor}
     */
    boolean runOnce(String name, Duration atMostFor, Duration atLeastFor, Runnable task);
}
