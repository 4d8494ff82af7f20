-- Baton transaction row-lock table for MariaDB (JdbcLockClient.inTransaction). Ready for Flyway/Liquibase.
-- One row per lock name, locked with SELECT … FOR UPDATE by the transaction that does the work. token and
-- holder record the last grant; tokens come from the lease table's sequence, which is not transactional,
-- so a rolled-back grant's token is never handed out again. Names are UTF-8 bytes: compared exactly.
CREATE SEQUENCE IF NOT EXISTS baton_locks_token_seq;

CREATE TABLE IF NOT EXISTS baton_locks_rowlocks (
    name        VARBINARY(2048) NOT NULL PRIMARY KEY,
    token       BIGINT          NOT NULL DEFAULT 0,
    holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    acquired_at DATETIME(6)     NULL COMMENT 'UTC'
) ENGINE = InnoDB;
