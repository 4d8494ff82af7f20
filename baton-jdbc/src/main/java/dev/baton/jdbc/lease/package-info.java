/**
 * The lease strategy: a row per lock ({@link dev.baton.jdbc.lease.JdbcLeaseBackend}, the algorithm), its SQL per
 * dialect ({@link dev.baton.jdbc.lease.LeaseTable} and its subclasses), the places in line
 * ({@link dev.baton.jdbc.lease.Line}), and how waiters are woken ({@link dev.baton.jdbc.lease.WakeUps}: PostgreSQL's
 * notices and release listener, MariaDB's bells, or polling).
 * Not API.
 */
package dev.baton.jdbc.lease;
