package dev.baton.jdbc.internal;

/**
 * The database clock as every statement of Baton reads it, per dialect family that needs an expression for
 * it (PostgreSQL's is simply {@code now()}).
 */
public final class SqlClocks {
    /** MySQL/MariaDB: UTC, whatever the session time zone, in microseconds. */
    public static final String MYSQL_NOW = "UTC_TIMESTAMP(6)";
    /** SQLite: milliseconds since the epoch, as an integer. */
    public static final String SQLITE_NOW = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

    private SqlClocks() {
    }
}
