package dev.baton.jdbc;

/** How a {@link JdbcLockClient} holds its locks. */
public enum Strategy {
    /**
     * A row per lock with owner, token and expiry by the database clock, renewed in the background.
     * Re-entrant per thread, not fair. Ends on release, on expiry without renewal, or on client close.
     * Works on every supported database, through any pooler.
     */
    LEASE,
    /**
     * PostgreSQL advisory locks or MySQL/MariaDB {@code GET_LOCK}, held by two dedicated server sessions of
     * the client. Re-entrant per thread, not fair. Ends on release, client close, or the moment the session
     * ends (the server frees it: no lease time to wait out). Waits on the server. Needs a direct connection
     * (or a pooler in session mode); not available on SQLite.
     */
    SESSION
}
