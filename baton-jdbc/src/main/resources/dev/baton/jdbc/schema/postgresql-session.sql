-- Baton session strategy for PostgreSQL: names of advisory locks, so that `baton list` can show a
-- 64-bit key's name whole. Apply after postgresql.sql (the session strategy draws its fencing tokens
-- from baton_locks_token_seq). Ready for Flyway/Liquibase as is.
CREATE TABLE IF NOT EXISTS baton_locks_names (
    lock_key bigint NOT NULL PRIMARY KEY,
    name     text   NOT NULL
);
