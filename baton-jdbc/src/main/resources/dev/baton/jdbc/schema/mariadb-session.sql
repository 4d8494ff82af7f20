-- Baton session strategy for MariaDB: names behind GET_LOCK keys, so that `baton list` can show them
-- whole. Apply after mariadb.sql (tokens come from baton_locks_token_seq). Ready for Flyway/Liquibase.
CREATE TABLE IF NOT EXISTS baton_locks_names (
    lock_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    name     VARBINARY(2048) NOT NULL
) ENGINE = InnoDB;
