package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.internal.TokenCounters;
import dev.baton.jdbc.internal.SqlClocks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * SQLite: milliseconds since the epoch, {@code ON CONFLICT}, the lease table's counter row. No gate row: SQLite
 * serialises writers itself.
 */
final class SqliteReadWriteStatements extends ReadWriteStatements {
    private static final String NOW = SqlClocks.SQLITE_NOW;

    SqliteReadWriteStatements(String table) {
        super(table);
    }

    @Override
    String now() {
        return NOW;
    }

    @Override
    String plus(String millis) {
        return NOW + " + " + millis;
    }

    @Override
    String remainingMillis() {
        return "expires_at - " + NOW;
    }

    /** Takes the database write lock first, so the read after it and the write after that are one serial step. */
    @Override
    void lockGateAndPurge(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                + " WHERE name = ? AND expires_at <= " + NOW)) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
    }

    @Override
    String upsert() {
        return "INSERT INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at) VALUES (?, ?, ?, ?, "
                + NOW + ", " + plus("?") + ")"
                + " ON CONFLICT (name, owner) DO UPDATE SET mode = excluded.mode, token = excluded.token,"
                + " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at";
    }

    @Override
    long nextToken(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            TokenCounters.bump(st, table + "_token", "UPDATE " + table + "_token SET value = value + 1 WHERE id = 1");
            try (ResultSet rs = st.executeQuery("SELECT value FROM " + table + "_token WHERE id = 1")) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
