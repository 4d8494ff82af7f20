package dev.baton.jdbc;

/** How a {@link JdbcLockClient} holds its locks. */
public enum Strategy {
    /**
     * A row per lock with owner, token and expiry by the database clock, renewed in the background.
     * Re-entrant per thread, fair: a waiter takes a place in the lock's line on the server, and a free lock
     * goes to the earliest live waiter of any client ({@code tryAcquire} never passes a waiter). Ends on
     * release, on expiry without renewal, or on client close.
     * Works on every supported database, through any pooler.
     */
    LEASE,
    /**
     * PostgreSQL advisory locks or MySQL/MariaDB {@code GET_LOCK}, held by two dedicated server sessions of
     * the client. Re-entrant per thread, not fair (waiters are served as the server's own lock wait serves
     * them). Ends on release, client close, or the moment the session
     * ends (the server frees it: no lease time to wait out). Waits on the server. Needs a direct connection
     * (PostgreSQL: a pooler, which answers the login itself, is refused at build, unless
     * {@link JdbcLocks.Builder#poolerInSessionMode()} says it is in session mode); not available on SQLite.
     * Keeps two connections of the pool for the client's life and borrows no others (a HikariCP pool below
     * two is refused at build). {@link dev.baton.Lease#checkValid()} asks the server whether the holding
     * session still holds the lock; {@link dev.baton.Lease#isValid()} learns of a lost session at the next
     * keepalive probe, every renewal interval.
     */
    SESSION
}
