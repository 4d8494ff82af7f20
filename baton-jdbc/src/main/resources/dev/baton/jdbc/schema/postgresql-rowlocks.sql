-- Baton transaction row-lock table for PostgreSQL (JdbcLockClient.inTransaction). Ready for Flyway/Liquibase.
-- One row per lock name, locked with SELECT … FOR UPDATE by the transaction that does the work. token and
-- holder record the last grant (visible once it commits); tokens come from the lease table's sequence,
-- which is not transactional, so a rolled-back grant's token is never handed out again.
CREATE SEQUENCE IF NOT EXISTS baton_locks_token_seq;

CREATE TABLE IF NOT EXISTS baton_locks_rowlocks (
    name        text        NOT NULL PRIMARY KEY,
    token       bigint      NOT NULL DEFAULT 0,
    holder      text,
    acquired_at timestamptz
);
