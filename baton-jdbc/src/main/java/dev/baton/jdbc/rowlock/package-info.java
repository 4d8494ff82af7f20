/**
 * The transaction row-lock strategy: {@code SELECT … FOR UPDATE} in the work's transaction
 * ({@link dev.baton.jdbc.rowlock.RowLockStrategy}, the algorithm), its lock step per dialect
 * ({@link dev.baton.jdbc.rowlock.RowLockStatements}). Not API.
 */
package dev.baton.jdbc.rowlock;
