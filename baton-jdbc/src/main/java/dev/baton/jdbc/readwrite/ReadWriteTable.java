package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.LeaseKeys;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Read-write locks on the lease strategy, in {@code <table>_rw}: one row per holder ({@code 'r'} reader,
 * {@code 'w'} writer) and per waiting writer ({@code 'p'}), keyed by (name, owner), with expiry by the
 * database clock like a lease.
 *
 * <p>Algorithm of an attempt, in one transaction:
 * <ol>
 *   <li>Lock the name's gate row (owner {@code ''}; created once if missing) with {@code FOR UPDATE}, so
 *       decisions for one name are serialised (SQLite: the database write lock does it). PostgreSQL runs the
 *       attempt at READ COMMITTED.</li>
 *   <li>Delete the name's expired rows (crashed holders, abandoned claims).</li>
 *   <li>Read: busy if another owner has a live writer row or a live waiting-writer row (writers first:
 *       a steady stream of readers cannot starve a writer). Write: busy if another owner has a live
 *       reader or writer row; then record or refresh this writer's waiting row, which expires after one
 *       lease time unless the writer keeps trying.</li>
 *   <li>Otherwise draw a fresh token (the lease table's sequence or counter) and write this owner's row.</li>
 * </ol>
 * Release deletes the owner's row where owner and token match; renewal extends live rows where they
 * match, like leases.
 *
 * <p>The SQL of each dialect family is in its {@link ReadWriteStatements}: {@link PostgresReadWriteStatements},
 * {@link MySqlReadWriteStatements} (MariaDB, MySQL), {@link SqliteReadWriteStatements}.
 */
public final class ReadWriteTable {
    private final ReadWriteStatements sql;
    private final String rw;

    private ReadWriteTable(ReadWriteStatements sql) {
        this.sql = sql;
        this.rw = sql.rw;
    }

    /** The read-write table beside lease table {@code table}, speaking {@code dialect}. */
    public static ReadWriteTable of(Dialect dialect, String table) {
        return new ReadWriteTable(ReadWriteStatements.of(dialect, table));
    }

    public String rwTable() {
        return rw;
    }

    private static String code(LockMode mode) {
        return switch (mode) {
            case READ -> "r";
            case WRITE -> "w";
            case EXCLUSIVE -> throw new IllegalArgumentException("not a read-write mode");
        };
    }

    /** One attempt (steps 1-4), in one transaction committed here whatever the connection's auto-commit. */
    public AcquireResult tryAcquire(Connection c, String name, LockMode mode, String owner, long leaseMillis)
            throws SQLException {
        sql.beforeAttempt(c, name);
        boolean ac = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            sql.beginAttempt(c, name);
            AcquireResult r = decide(c, name, mode, owner, leaseMillis);
            c.commit();
            return r;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(ac);
        }
    }

    private AcquireResult decide(Connection c, String name, LockMode mode, String owner, long leaseMillis)
            throws SQLException {
        sql.lockGateAndPurge(c, name);
        String blocker = null;
        long blockerToken = -1;
        long blockerRemaining = -1;
        try (PreparedStatement ps = c.prepareStatement("SELECT owner, mode, token, " + sql.remainingMillis()
                + " FROM " + rw + " WHERE name = ? AND owner <> '' AND owner <> ? AND mode <> 'g'")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String m = rs.getString(2);
                    boolean blocks = mode == LockMode.READ ? (m.equals("w") || m.equals("p"))
                            : (m.equals("r") || m.equals("w"));
                    if (blocks && (blocker == null || m.equals("w"))) {
                        blocker = rs.getString(1);
                        blockerToken = m.equals("p") ? -1 : rs.getLong(3);
                        blockerRemaining = rs.getLong(4);
                    }
                }
            }
        }
        if (blocker != null) {
            if (mode == LockMode.WRITE) {
                upsert(c, name, owner, "p", 0, leaseMillis);
            }
            return new AcquireResult.Busy(blocker, blockerToken, Duration.ofMillis(Math.max(0, blockerRemaining)));
        }
        long token = sql.nextToken(c);
        upsert(c, name, owner, code(mode), token, leaseMillis);
        return new AcquireResult.Granted(token);
    }

    private void upsert(Connection c, String name, String owner, String mode, long token, long leaseMillis)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.upsert())) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setString(3, mode);
            ps.setLong(4, token);
            ps.setLong(5, leaseMillis);
            ps.executeUpdate();
        }
    }

    public boolean release(Connection c, LeaseKey key, String channel) throws SQLException {
        int n;
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                + " WHERE name = ? AND owner = ? AND token = ? AND mode = ?")) {
            ps.setString(1, key.name());
            ps.setString(2, key.owner());
            ps.setLong(3, key.token());
            ps.setString(4, code(key.mode()));
            n = ps.executeUpdate();
        }
        if (n > 0) {
            sql.announceRelease(c, channel, key.name());
        }
        return n > 0;
    }

    public void abandon(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                + " WHERE name = ? AND owner = ? AND mode = 'p'")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.executeUpdate();
        }
    }

    public Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException {
        Set<LeaseKey> renewed = new HashSet<>();
        String predicate = LeaseKeys.predicate(keys.size());
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + rw + " SET expires_at = " + sql.plus("?")
                + sql.renewFrom() + " WHERE expires_at > " + sql.now() + " AND mode IN ('r', 'w') AND " + predicate)) {
            ps.setLong(1, leaseMillis);
            LeaseKeys.bind(ps, 2, keys);
            if (ps.executeUpdate() == keys.size()) {
                renewed.addAll(keys);
                return renewed;
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token, mode FROM " + rw
                + " WHERE expires_at > " + sql.now() + " AND mode IN ('r', 'w') AND " + predicate)) {
            LeaseKeys.bind(ps, 1, keys);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    LockMode m = rs.getString(4).equals("r") ? LockMode.READ : LockMode.WRITE;
                    renewed.add(new LeaseKey(sql.readName(rs, 1), rs.getString(2), rs.getLong(3), m));
                }
            }
        }
        return renewed;
    }

    /** Whether the holder's row (name, owner, token, mode) is live now, by the database clock. */
    public boolean isHeld(Connection c, LeaseKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + rw + " WHERE expires_at > " + sql.now()
                + " AND mode = ? AND " + LeaseKeys.predicate(1))) {
            ps.setString(1, code(key.mode()));
            LeaseKeys.bind(ps, 2, List.of(key));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }
}
