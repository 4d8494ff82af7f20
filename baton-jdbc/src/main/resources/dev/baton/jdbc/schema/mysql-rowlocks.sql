-- Baton transaction row-lock table for MySQL 8 (JdbcLockClient.inTransaction). Ready for Flyway/Liquibase.
-- One row per lock name, locked with SELECT … FOR UPDATE by the transaction that does the work. MySQL has no
-- sequences, so a grant first commits a fresh token from the lease table's counter into the row (under the
-- row lock), then locks the row again and proceeds only if its token is still that one.
CREATE TABLE IF NOT EXISTS baton_locks_token (
    id    TINYINT NOT NULL PRIMARY KEY,
    value BIGINT  NOT NULL
) ENGINE = InnoDB;

INSERT IGNORE INTO baton_locks_token (id, value) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS baton_locks_rowlocks (
    name        VARBINARY(2048) NOT NULL PRIMARY KEY,
    token       BIGINT          NOT NULL DEFAULT 0,
    holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    acquired_at DATETIME(6)     NULL COMMENT 'UTC'
) ENGINE = InnoDB;
