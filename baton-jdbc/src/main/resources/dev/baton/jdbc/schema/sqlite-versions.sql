-- Baton optimistic version table for SQLite (JdbcLockClient.optimistic). Ready for Flyway/Liquibase.
-- One row per name; every committed update raises version by one.
CREATE TABLE IF NOT EXISTS baton_locks_versions (
    name    TEXT    NOT NULL PRIMARY KEY,
    version INTEGER NOT NULL
);
