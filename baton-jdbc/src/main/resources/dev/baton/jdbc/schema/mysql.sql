-- Baton lease table for MySQL 8 (no sequences: tokens come from a one-row counter updated in the
-- acquiring transaction). Ready for Flyway/Liquibase as is.
-- Names are stored as UTF-8 bytes so that comparison is exact (no case folding, no PAD SPACE).
-- Times are UTC_TIMESTAMP(6) values, independent of any session's time zone.
CREATE TABLE IF NOT EXISTS baton_locks_token (
    id    TINYINT NOT NULL PRIMARY KEY,
    value BIGINT  NOT NULL
) ENGINE = InnoDB;

INSERT IGNORE INTO baton_locks_token (id, value) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS baton_locks (
    name        VARBINARY(2048) NOT NULL PRIMARY KEY,
    owner       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    token       BIGINT          NOT NULL,
    acquired_at DATETIME(6)     NOT NULL COMMENT 'UTC',
    expires_at  DATETIME(6)     NOT NULL COMMENT 'UTC'
) ENGINE = InnoDB;

-- Read-write locks: one row per holder (mode 'r' reader, 'w' writer), per waiting writer ('p': holds back
-- new readers so writers are not starved) and one gate row per name (owner '', mode 'g') that every
-- decision locks first.
CREATE TABLE IF NOT EXISTS baton_locks_rw (
    name        VARBINARY(2048) NOT NULL,
    owner       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    mode        CHAR(1)         NOT NULL,
    token       BIGINT          NOT NULL,
    acquired_at DATETIME(6)     NOT NULL COMMENT 'UTC',
    expires_at  DATETIME(6)     NOT NULL COMMENT 'UTC',
    PRIMARY KEY (name, owner)
) ENGINE = InnoDB;

-- The line of waiters for plain (exclusive) leases: one ticket per waiting owner. A free lock goes to the
-- earliest live ticket (enqueued_at, then owner); a ticket lives a second past its client's last heartbeat
-- (one statement every 200 ms refreshes all of a waiting client's tickets), whatever the waiter's lease, so a
-- dead waiter holds a free lock back for about a second. Waiting clients delete tickets dead for 10 s. InnoDB, unlike MariaDB's MEMORY line:
-- MySQL's grant is a transaction that also removes the ticket (a non-transactional table there would keep a
-- rolled-back grant's removal, and GTID consistency refuses the mix), and Group Replication refuses writes to
-- tables of other engines.
CREATE TABLE IF NOT EXISTS baton_locks_queue (
    name        VARBINARY(2048) NOT NULL,
    owner       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    enqueued_at DATETIME(6)     NOT NULL COMMENT 'UTC',
    expires_at  DATETIME(6)     NOT NULL COMMENT 'UTC',
    PRIMARY KEY (name, owner)
) ENGINE = InnoDB;
