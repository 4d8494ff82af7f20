-- Baton optimistic version table for MySQL/MariaDB (JdbcLockClient.optimistic). Ready for Flyway/Liquibase.
-- One row per name; every committed update raises version by one. Names are UTF-8 bytes: compared exactly.
CREATE TABLE IF NOT EXISTS baton_locks_versions (
    name    VARBINARY(2048) NOT NULL PRIMARY KEY,
    version BIGINT          NOT NULL
) ENGINE = InnoDB;
