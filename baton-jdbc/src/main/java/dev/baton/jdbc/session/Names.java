package dev.baton.jdbc.session;

import dev.baton.LockBackendException;
import dev.baton.LockException;
import dev.baton.jdbc.lease.LeaseTable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The names behind the server's keys: each name this client locks is recorded once in {@code <table>_names} (so
 * {@code baton list} shows it whole), and a plain lock's name is claimed for the session strategy in the lease
 * table (one name, one lock: a name with a lease row is refused). Both on the session's own connection, before
 * the lock is taken.
 */
final class Names {
    private final SessionStatements sql;
    private final String table;
    private final String description;
    /** Keys whose names this client recorded (a name's read-write key is recorded apart from its plain key). */
    private final Set<String> registeredNames = ConcurrentHashMap.newKeySet();

    Names(SessionStatements sql) {
        this.sql = sql;
        this.table = sql.table;
        this.description = sql.description;
    }

    /**
     * Records the name once per client, on the session's own connection (auto-commit, so it persists whatever
     * the pool's default): borrowing a pool connection while holding the session would wait for a busy pool.
     * A plain lock's name is also claimed for the session strategy in the lease table ({@link #claimName}).
     */
    void register(Connection c, String name, String key) throws SQLException {
        if (registeredNames.contains(key)) { // by key: a name's read-write key is registered apart
            return;
        }
        try {
            if (key.equals(sql.serverKey(name))) {
                claimName(c, name); // a plain lock's name (read-write locks are a namespace apart)
            }
            sql.insertName(c, key, name);
        } catch (SQLException e) {
            if (Session.fatal(c, e)) {
                throw e; // the session is gone: the caller replaces it
            }
            // nothing was taken yet: the session and its leases are fine
            throw new LockBackendException(description, "recording the name of '" + name + "' in " + table
                    + "_names failed: " + e.getMessage() + " (SQL state " + e.getSQLState() + ")", e);
        }
        registeredNames.add(key);
    }

    /**
     * One name, one lock: claims {@code name} for the session strategy with a marker row in the lease table
     * (see {@link LeaseTable#SESSION_MARKER}), unless the name has a row there already, then reads the row
     * back. If it is not a marker, the name is the lease strategy's (or runOnce's), and is refused. Committed
     * before the read, whatever the connection's auto-commit default, so the read sees the row that won.
     *
     * @throws LockException if the name has a lease row
     */
    private void claimName(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.markerInsert)) {
            ps.setString(1, name);
            ps.setString(2, LeaseTable.SESSION_MARKER);
            ps.executeUpdate();
        }
        if (!c.getAutoCommit()) {
            c.commit();
        }
        String owner;
        try (PreparedStatement ps = c.prepareStatement("SELECT owner FROM " + table + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the row of '" + name + "' in " + table + " was deleted (purged) while"
                            + " claiming the name for the session strategy; try again");
                }
                owner = rs.getString(1);
            }
        } finally {
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        }
        if (!LeaseTable.SESSION_MARKER.equals(owner)) {
            throw LeaseTable.usedByLease(name, table, owner);
        }
    }
}
