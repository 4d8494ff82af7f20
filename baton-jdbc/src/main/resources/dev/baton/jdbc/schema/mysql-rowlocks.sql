-- Baton transaction row-lock table for MySQL 8 (JdbcLockClient.inTransaction). Ready for Flyway/Liquibase.
-- One row per lock name, locked with SELECT … FOR UPDATE by the transaction that does the work. MySQL has no
-- sequences, so a grant first commits a fresh token from the lease table's counter into the row (under the
-- row lock), then locks the row again and proceeds only if its token is still that one.
CREATE TABLE IF NOT EXISTS baton_locks_token (
    id    TINYINT NOT NULL PRIMARY KEY,
    value BIGINT  NOT NULL
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS baton_locks_rowlocks (
    name        VARBINARY(2048) NOT NULL PRIMARY KEY,
    token       BIGINT          NOT NULL DEFAULT 0,
    holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    acquired_at DATETIME(6)     NULL COMMENT 'UTC'
) ENGINE = InnoDB;

-- The counter's one row (also in the lease table's DDL, which must be applied first), at the largest token the
-- lease, read-write and row-lock tables hold: a row put back after it was deleted starts above every token still
-- in them, so tokens never go backward. Tokens of rows already purged cannot be known.
INSERT IGNORE INTO baton_locks_token (id, value)
SELECT 1, COALESCE(MAX(token), 0)
FROM (SELECT token FROM baton_locks UNION ALL SELECT token FROM baton_locks_rw UNION ALL
      SELECT token FROM baton_locks_rowlocks) AS tokens;
