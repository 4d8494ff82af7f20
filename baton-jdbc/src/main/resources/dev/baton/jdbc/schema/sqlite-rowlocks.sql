-- Baton transaction-lock table for SQLite (JdbcLockClient.inTransaction). Ready for Flyway/Liquibase.
-- SQLite has no row locks: the lock is BEGIN IMMEDIATE, the whole database's write lock. The row records each
-- grant's fencing token (from the lease table's counter, committed before the lock is taken) and holder.
CREATE TABLE IF NOT EXISTS baton_locks_token (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);

INSERT OR IGNORE INTO baton_locks_token (id, value) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS baton_locks_rowlocks (
    name        TEXT    NOT NULL PRIMARY KEY,
    token       INTEGER NOT NULL DEFAULT 0,
    holder      TEXT,
    acquired_at INTEGER
);
