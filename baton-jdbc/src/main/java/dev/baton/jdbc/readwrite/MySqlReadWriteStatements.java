package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.internal.TokenCounters;
import dev.baton.jdbc.internal.SqlClocks;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * MariaDB and MySQL 8: {@code UTC_TIMESTAMP(6)}, {@code ON DUPLICATE KEY UPDATE}; tokens from the lease table's
 * sequence (MariaDB) or counter row (MySQL).
 */
final class MySqlReadWriteStatements extends ReadWriteStatements {
    private static final String NOW = SqlClocks.MYSQL_NOW;
    private final boolean mariadb;

    MySqlReadWriteStatements(String table, boolean mariadb) {
        super(table);
        this.mariadb = mariadb;
    }

    @Override
    String now() {
        return NOW;
    }

    @Override
    String plus(String millis) {
        return NOW + " + INTERVAL (" + millis + " * 1000) MICROSECOND";
    }

    @Override
    String remainingMillis() {
        return "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000";
    }

    /**
     * The gate row, in its own statement: inside the transaction, InnoDB's shared lock on a duplicate key would
     * meet the gate's {@code FOR UPDATE} of a concurrent attempt in a deadlock.
     */
    @Override
    void beforeAttempt(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT IGNORE INTO " + rw
                + " (name, owner, mode, token, acquired_at, expires_at)"
                + " VALUES (?, '', 'g', 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))")) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
    }

    @Override
    String upsert() {
        return "INSERT INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at) VALUES (?, ?, ?, ?, "
                + NOW + ", " + plus("?") + ")"
                + " ON DUPLICATE KEY UPDATE mode = VALUES(mode), token = VALUES(token),"
                + " acquired_at = VALUES(acquired_at), expires_at = VALUES(expires_at)";
    }

    @Override
    long nextToken(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            if (mariadb) {
                try (ResultSet rs = st.executeQuery("SELECT NEXTVAL(" + table + "_token_seq)")) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
            TokenCounters.bump(st, table + "_token",
                    "UPDATE " + table + "_token SET value = LAST_INSERT_ID(value + 1) WHERE id = 1");
            try (ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Names are binary columns here: read as UTF-8 bytes. */
    @Override
    String readName(ResultSet rs, int column) throws SQLException {
        return new String(rs.getBytes(column), StandardCharsets.UTF_8);
    }
}
