/**
 * The optimistic version strategy: compare-and-set of a version row
 * ({@link dev.baton.jdbc.optimistic.OptimisticStrategy}, the algorithm;
 * {@link dev.baton.jdbc.optimistic.OptimisticStatements} per dialect). Not API.
 */
package dev.baton.jdbc.optimistic;
