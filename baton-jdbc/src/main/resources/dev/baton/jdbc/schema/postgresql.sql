-- Baton lease table for PostgreSQL (9.5+; tested on 15). Ready for Flyway/Liquibase as is.
-- Expiry is decided by the database clock (now()); tokens come from the sequence, so they keep
-- increasing per lock even after old rows are purged.
CREATE SEQUENCE IF NOT EXISTS baton_locks_token_seq;

CREATE TABLE IF NOT EXISTS baton_locks (
    name        text        NOT NULL PRIMARY KEY,
    owner       text,
    token       bigint      NOT NULL,
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);

-- Read-write locks: one row per holder (mode 'r' reader, 'w' writer), per waiting writer ('p': holds back
-- new readers so writers are not starved) and one gate row per name (owner '', mode 'g') that every
-- decision locks first.
CREATE TABLE IF NOT EXISTS baton_locks_rw (
    name        text        NOT NULL,
    owner       text        NOT NULL,
    mode        char(1)     NOT NULL,
    token       bigint      NOT NULL,
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (name, owner)
);

-- The line of waiters for plain (exclusive) leases: one ticket per waiting owner. A free lock goes to the
-- earliest live ticket (enqueued_at, then owner); a ticket lives a second past its client's last heartbeat
-- (one statement every 200 ms refreshes all of a waiting client's tickets), whatever the waiter's lease, so a
-- dead waiter holds a free lock back for about a second. Waiting clients delete tickets dead for 10 s.
CREATE TABLE IF NOT EXISTS baton_locks_queue (
    name        text        NOT NULL,
    owner       text        NOT NULL,
    enqueued_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (name, owner)
);
