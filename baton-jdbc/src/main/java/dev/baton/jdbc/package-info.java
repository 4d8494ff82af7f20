/**
 * Baton's JDBC backend, the public API: {@link dev.baton.jdbc.JdbcLocks} (the builder),
 * {@link dev.baton.jdbc.JdbcLockClient}, {@link dev.baton.jdbc.Strategy}, {@link dev.baton.jdbc.Dialect} and the
 * types of the per-call strategies. Each strategy lives in a sub-package of its own, opening with the class that
 * holds its algorithm; {@code internal} holds the plumbing they share. Only this package is API. Of its classes,
 * only the facade that assembles the strategies ({@code JdbcLocks} and the package-private
 * {@code TransactionStrategies}) refers to the strategy packages; the API types refer to none, and the strategy
 * packages refer to the API, never to the facade (PackageCyclesTest).
 */
package dev.baton.jdbc;
