-- Baton lease table for SQLite (3.35+). Ready for Flyway/Liquibase as is.
-- Times are milliseconds since the epoch by SQLite's clock (the host's). Tokens come from a one-row
-- counter updated in the acquiring transaction.
CREATE TABLE IF NOT EXISTS baton_locks_token (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);

INSERT OR IGNORE INTO baton_locks_token (id, value) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS baton_locks (
    name        TEXT    NOT NULL PRIMARY KEY,
    owner       TEXT,
    token       INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);

-- Read-write locks: one row per holder (mode 'r' reader, 'w' writer) and per waiting writer ('p': holds
-- back new readers so writers are not starved); decisions are serialised by SQLite's write lock.
CREATE TABLE IF NOT EXISTS baton_locks_rw (
    name        TEXT    NOT NULL,
    owner       TEXT    NOT NULL,
    mode        TEXT    NOT NULL,
    token       INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (name, owner)
);

-- The line of waiters for plain (exclusive) leases: one ticket per waiting owner. A free lock goes to the
-- earliest live ticket (enqueued_at, then owner); a ticket lives a second past its client's last heartbeat
-- (one statement every 200 ms refreshes all of a waiting client's tickets), whatever the waiter's lease, so a
-- dead waiter holds a free lock back for about a second. Waiting clients delete tickets dead for 10 s.
CREATE TABLE IF NOT EXISTS baton_locks_queue (
    name        TEXT    NOT NULL,
    owner       TEXT    NOT NULL,
    enqueued_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (name, owner)
);
