package dev.baton.jdbc;

import dev.baton.UnsupportedBackendException;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/** The SQL dialects the lease strategy speaks. Detected from the connection; an unknown database is an error. */
public enum Dialect {
    /** PostgreSQL 9.5+: one-statement upsert with {@code RETURNING}, a sequence, {@code LISTEN/NOTIFY}. */
    POSTGRESQL("postgresql"),
    /**
     * MariaDB 10.5+: a sequence; a grant is one {@code UPDATE} of a free row (the token back in the OK packet), an
     * insert ({@code RETURNING}) for a name's first use; releases are entries in a MEMORY table.
     */
    MARIADB("mariadb"),
    /** MySQL 8: {@code INSERT … ON DUPLICATE KEY UPDATE} and a counter row, in one transaction. */
    MYSQL("mysql"),
    /** SQLite 3.24+: upsert and a counter row, in one transaction. */
    SQLITE("sqlite");

    private final String id;

    Dialect(String id) {
        this.id = id;
    }

    /** The short name used in messages and in the DDL resource name. */
    public String id() {
        return id;
    }

    /** The shipped DDL for this dialect, for Flyway/Liquibase: a classpath resource. */
    public String schemaResource() {
        return "/dev/baton/jdbc/schema/" + id + ".sql";
    }

    /** The shipped DDL of the session strategy's name table, applied after {@link #schemaResource()}. */
    public String sessionSchemaResource() {
        return "/dev/baton/jdbc/schema/" + id + "-session.sql";
    }

    /**
     * Detects the dialect of the database behind a connection.
     *
     * @throws UnsupportedBackendException if the database is not one Baton supports, or too old
     */
    public static Dialect detect(Connection connection) throws SQLException {
        DatabaseMetaData md = connection.getMetaData();
        String product = md.getDatabaseProductName();
        String version = md.getDatabaseProductVersion();
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        String v = version == null ? "" : version.toLowerCase(Locale.ROOT);
        if (p.contains("postgresql")) {
            return POSTGRESQL;
        }
        if (p.contains("mariadb") || (p.contains("mysql") && v.contains("mariadb"))) {
            int major = md.getDatabaseMajorVersion();
            int minor = md.getDatabaseMinorVersion();
            if (major < 10 || (major == 10 && minor < 5)) {
                throw new UnsupportedBackendException("MariaDB " + version + " is too old for Baton's MARIADB dialect (needs "
                        + "10.5+ for INSERT … RETURNING); choose .dialect(Dialect.MYSQL) explicitly");
            }
            return MARIADB;
        }
        if (p.contains("mysql")) {
            if (md.getDatabaseMajorVersion() < 8) {
                throw new UnsupportedBackendException("MySQL " + version + " is not supported; Baton needs MySQL 8 or later");
            }
            return MYSQL;
        }
        if (p.contains("sqlite")) {
            int major = md.getDatabaseMajorVersion();
            int minor = md.getDatabaseMinorVersion();
            if (major < 3 || (major == 3 && minor < 24)) {
                throw new UnsupportedBackendException("SQLite " + version + " is too old; Baton needs 3.24+ (upsert)");
            }
            return SQLITE;
        }
        throw new UnsupportedBackendException("unsupported database '" + product + "' (version " + version + "): Baton's "
                + "JDBC lease strategy supports PostgreSQL, MariaDB, MySQL and SQLite");
    }
}
