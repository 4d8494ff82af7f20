/**
 * Baton's JDBC backend, the public API: {@link dev.baton.jdbc.JdbcLocks} (the builder),
 * {@link dev.baton.jdbc.JdbcLockClient}, {@link dev.baton.jdbc.Strategy}, {@link dev.baton.jdbc.Dialect} and the
 * types of the per-call strategies. Each strategy lives in a sub-package of its own, opening with the class that
 * holds its algorithm; {@code internal} holds the plumbing they share. Only this package is API.
 */
package dev.baton.jdbc;
