package dev.baton.jdbc.session;

import dev.baton.jdbc.internal.TokenCounters;
import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * MariaDB's and MySQL's session locks: named locks ({@code GET_LOCK}, {@code RELEASE_LOCK}, {@code IS_USED_LOCK})
 * on {@code "baton:"} plus a base64url digest of the name; tokens from the lease table's sequence (MariaDB, in
 * the same statement) or counter row (MySQL, bumped after the grant); a waiting session cancelled by
 * {@code KILL QUERY}. No shared mode, so no read-write session locks.
 */
final class MySqlSessionStatements extends SessionStatements {
    private final boolean maria;

    MySqlSessionStatements(Dialect dialect, String table, boolean maria) {
        super(dialect, table);
        this.maria = maria;
    }

    @Override
    String serverKey(String name) {
        return keys.myKey(name);
    }

    @Override
    String serverIdQuery() {
        return "SELECT CONNECTION_ID()";
    }

    @Override
    void insertName(Connection c, String key, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT IGNORE INTO " + table + "_names (lock_key, name)"
                + " VALUES (?, ?)")) {
            ps.setString(1, key);
            ps.setString(2, name);
            ps.executeUpdate();
        }
    }

    /**
     * One statement takes the named lock ({@code GET_LOCK} with the wait, or 0) and, only if granted, draws the
     * token from the sequence (MariaDB); MySQL bumps the counter row after the grant, on the same session.
     */
    @Override
    AcquireResult attempt(SessionContext s, Connection c, String key, LockMode mode, Duration wait)
            throws SQLException {
        String token = maria ? "IF(g.ok = 1, NEXTVAL(" + table + "_token_seq), NULL)" : "NULL";
        String sql = "SELECT g.ok, " + token + ", CONNECTION_ID(), IF(g.ok = 1, NULL, IS_USED_LOCK(?))"
                + " FROM (SELECT GET_LOCK(?, ?) AS ok) g";
        long granted;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, key);
            ps.setString(2, key);
            ps.setBigDecimal(3, wait == null ? java.math.BigDecimal.ZERO
                    : java.math.BigDecimal.valueOf(Math.max(1, wait.toMillis()), 3));
            s.beginBlocking(wait);
            try (ResultSet rs = ps.executeQuery()) {
                s.endBlocking(wait);
                rs.next();
                s.checkServerId(rs.getLong(3));
                if (rs.getInt(1) != 1) {
                    long holder = rs.getLong(4);
                    return new AcquireResult.Busy(rs.wasNull() ? null : "connection " + holder, -1, null);
                }
                granted = rs.getLong(2);
            } finally {
                s.endBlocking(wait);
            }
        } catch (SQLException e) {
            if (wait == null || !s.slicedOut(e)) {
                throw e;
            }
            // GET_LOCK interrupted by our KILL QUERY: it may have been granted in that instant (the key is
            // reserved in this client, so a grant on this session now is this attempt's)
            try (PreparedStatement ps = c.prepareStatement("SELECT IS_USED_LOCK(?) = CONNECTION_ID()")) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (!rs.getBoolean(1)) {
                        throw e;
                    }
                }
            } catch (SQLException unknown) {
                if (unknown == e) {
                    throw e;
                }
                throw new SQLException("could not tell whether a cancelled wait left the lock granted: "
                        + unknown.getMessage(), "58000", unknown);
            }
            granted = maria ? nextMariaToken(c) : -1;
        }
        if (!maria) {
            // MySQL has no sequence: the counter row, bumped after the grant, on the same session
            try (Statement st = c.createStatement()) {
                TokenCounters.bump(st, table + "_token",
                        "UPDATE " + table + "_token SET value = LAST_INSERT_ID(value + 1) WHERE id = 1");
                try (ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
                    rs.next();
                    granted = rs.getLong(1);
                }
            }
        }
        return new AcquireResult.Granted(granted);
    }

    private long nextMariaToken(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT NEXTVAL(" + table + "_token_seq)")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    boolean release(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    @Override
    String cancelWait(long target) {
        // target is a server session id (a long the server gave us), not user input
        return "KILL QUERY " + target;
    }

    /** {@code IS_USED_LOCK(key)} is that session's connection id. */
    @Override
    Answer confirm(Connection c, LeaseKey lease, long holderId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT CONNECTION_ID(), IS_USED_LOCK(?) <=> ?")) {
            ps.setString(1, keys.myKey(lease.name()));
            ps.setLong(2, holderId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Answer(rs.getLong(1), rs.getBoolean(2));
            }
        }
    }

    @Override
    List<LockInfo> inspect(Connection c) throws SQLException {
        List<LockInfo> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, CONCAT('connection ', IS_USED_LOCK(lock_key))"
                + " FROM " + table + "_names WHERE IS_USED_LOCK(lock_key) IS NOT NULL ORDER BY name");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                // names are binary columns here: read as UTF-8 bytes
                out.add(new LockInfo(new String(rs.getBytes(1), StandardCharsets.UTF_8), rs.getString(2), -1, null,
                        null, true));
            }
        }
        return out;
    }
}
