-- Baton lease table for MariaDB (10.5+; tested on 10.11). Ready for Flyway/Liquibase as is.
-- Names are stored as UTF-8 bytes so that comparison is exact (no case folding, no PAD SPACE).
-- Times are UTC_TIMESTAMP(6) values, independent of any session's time zone.
CREATE SEQUENCE IF NOT EXISTS baton_locks_token_seq;

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
-- dead waiter holds a free lock back for about a second. Waiting clients delete tickets dead for 10 s.
-- MEMORY, not InnoDB: a ticket is the order of the line, not a grant, so taking and leaving a place cost no
-- durable commit (InnoDB: one redo-log flush each, two of the four per hand-over). A server restart empties the
-- line (waiters write their tickets again at their next refresh); Galera does not replicate it (each node keeps
-- its own line; grants stay exclusive, they are decided on the InnoDB lease row). A ticket takes about 6 KB (row
-- and key), so the line holds max_heap_table_size / 6 KB tickets (2,873 with the default 16 MB), the setting as
-- it was when the table was created or, after a restart, first opened: raise it globally where more threads may
-- wait at once. ENGINE = InnoDB works too, at a flush per ticket. BTREE: the statements look tickets up by name
-- alone, which a HASH key cannot.
CREATE TABLE IF NOT EXISTS baton_locks_queue (
    name        VARBINARY(2048) NOT NULL,
    owner       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    enqueued_at DATETIME(6)     NOT NULL COMMENT 'UTC',
    expires_at  DATETIME(6)     NOT NULL COMMENT 'UTC',
    PRIMARY KEY USING BTREE (name, owner)
) ENGINE = MEMORY;

-- Releases of plain leases: one entry per released grant (its token and acquired_at, and when it was released). A release adds an entry
-- instead of writing the lease row, so it costs no durable commit (grants and renewals are the flushes of a lease); a row
-- whose grant has an entry is free. MEMORY: a server restart empties it, and each lease released before then counts
-- as held until it ends (never held by two), as a PostgreSQL release lost with its unflushed WAL does. Entries that
-- free nothing any more are deleted when the table is full and by purgeExpired; an entry takes 68 bytes (measured), so
-- the default max_heap_table_size (16 MB, as it was when the table was created or, after a restart, first opened)
-- holds about 246,000. Full of entries of unexpired leases, a release writes the row as before (a flush).
-- Galera does not replicate MEMORY tables: there, create it with ENGINE = InnoDB (a release is then a flush again).
-- With the binary log on and sync_binlog=1, a release still flushes the binary log.
CREATE TABLE IF NOT EXISTS baton_locks_released (
    token       BIGINT          NOT NULL,
    acquired_at DATETIME(6)     NOT NULL COMMENT 'UTC',
    released_at DATETIME(6)     NOT NULL COMMENT 'UTC: when the lease ended (listings, purgeExpired)',
    PRIMARY KEY USING HASH (token, acquired_at)
) ENGINE = MEMORY;
