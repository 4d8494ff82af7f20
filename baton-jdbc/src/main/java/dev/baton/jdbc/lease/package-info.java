/**
 * The lease strategy: a row per lock ({@link dev.baton.jdbc.lease.JdbcLeaseBackend}, the algorithm), its SQL per
 * dialect ({@link dev.baton.jdbc.lease.LeaseTable} and its subclasses), and PostgreSQL's release listener.
 * Not API.
 */
package dev.baton.jdbc.lease;
