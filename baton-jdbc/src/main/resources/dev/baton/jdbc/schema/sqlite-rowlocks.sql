-- Baton transaction-lock table for SQLite (JdbcLockClient.inTransaction). Ready for Flyway/Liquibase.
-- SQLite has no row locks: the lock is BEGIN IMMEDIATE, the whole database's write lock. The row records each
-- grant's fencing token (from the lease table's counter, committed before the lock is taken) and holder.
CREATE TABLE IF NOT EXISTS baton_locks_token (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS baton_locks_rowlocks (
    name        TEXT    NOT NULL PRIMARY KEY,
    token       INTEGER NOT NULL DEFAULT 0,
    holder      TEXT,
    acquired_at INTEGER
);

-- The counter's one row (also in the lease table's DDL, which must be applied first), at the largest token the
-- lease, read-write and row-lock tables hold: a row put back after it was deleted starts above every token still
-- in them, so tokens never go backward. Tokens of rows already purged cannot be known.
INSERT OR IGNORE INTO baton_locks_token (id, value)
SELECT 1, COALESCE(MAX(token), 0)
FROM (SELECT token FROM baton_locks UNION ALL SELECT token FROM baton_locks_rw UNION ALL
      SELECT token FROM baton_locks_rowlocks) AS tokens;
