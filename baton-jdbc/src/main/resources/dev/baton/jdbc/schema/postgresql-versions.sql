-- Baton optimistic version table for PostgreSQL (JdbcLockClient.optimistic). Ready for Flyway/Liquibase.
-- One row per name; every committed update raises version by one.
CREATE TABLE IF NOT EXISTS baton_locks_versions (
    name    text   NOT NULL PRIMARY KEY,
    version bigint NOT NULL
);
