/**
 * Scheduled-task semantics ({@code runOnce}) on the lease table's rows
 * ({@link dev.baton.jdbc.scheduled.ScheduledRuns}, the algorithm; {@link dev.baton.jdbc.scheduled.ScheduledStatements}
 * per dialect). Not API.
 */
package dev.baton.jdbc.scheduled;
