package dev.baton.jdbc;

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
 *       decisions for one name are serialised (SQLite: the database write lock does it).</li>
 *   <li>Delete the name's expired rows (crashed holders, abandoned claims).</li>
 *   <li>Read: busy if another owner has a live writer row or a live waiting-writer row (writers first:
 *       a steady stream of readers cannot starve a writer). Write: busy if another owner has a live
 *       reader or writer row; then record or refresh this writer's waiting row, which expires after one
 *       lease time unless the writer keeps trying.</li>
 *   <li>Otherwise draw a fresh token (the lease table's sequence or counter) and write this owner's row.</li>
 * </ol>
 * Release deletes the owner's row where owner and token match; renewal extends live rows where they
 * match, like leases.
 */
final class ReadWriteTable {
    private final Dialect dialect;
    private final String table;
    private final String rw;
    private final String now;

    ReadWriteTable(Dialect dialect, String table) {
        this.dialect = dialect;
        this.table = table;
        this.rw = table + "_rw";
        this.now = switch (dialect) {
            case POSTGRESQL -> "now()";
            case MARIADB, MYSQL -> MySqlFamilyLeaseTable.NOW;
            case SQLITE -> SqliteLeaseTable.NOW;
        };
    }

    String rwTable() {
        return rw;
    }

    private String plus(String param) {
        return switch (dialect) {
            case POSTGRESQL -> now + " + " + param + " * interval '1 millisecond'";
            case MARIADB, MYSQL -> now + " + INTERVAL (" + param + " * 1000) MICROSECOND";
            case SQLITE -> now + " + " + param;
        };
    }

    private String remainingMillis() {
        return switch (dialect) {
            case POSTGRESQL -> "ceil(extract(epoch FROM (expires_at - now())) * 1000)::bigint";
            case MARIADB, MYSQL -> "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000";
            case SQLITE -> "expires_at - " + now;
        };
    }

    private static String code(LockMode mode) {
        return switch (mode) {
            case READ -> "r";
            case WRITE -> "w";
            case EXCLUSIVE -> throw new IllegalArgumentException("not a read-write mode");
        };
    }

    private String name(ResultSet rs, int column) throws SQLException {
        return dialect == Dialect.MARIADB || dialect == Dialect.MYSQL
                ? new String(rs.getBytes(column), StandardCharsets.UTF_8) : rs.getString(column);
    }

    AcquireResult tryAcquire(Connection c, String name, LockMode mode, String owner, long leaseMillis)
            throws SQLException {
        if (dialect != Dialect.POSTGRESQL) {
            // its own statement: inside the transaction, InnoDB's shared lock on a duplicate key would meet the
            // gate's FOR UPDATE of a concurrent attempt in a deadlock
            ensureGate(c, name);
        }
        boolean ac = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            if (dialect == Dialect.POSTGRESQL) {
                // every statement of the attempt at READ COMMITTED, whatever the pool's default: the read after
                // the gate lock must see every grant committed before it (under REPEATABLE READ the snapshot would
                // predate the wait for the gate), and a gate row another attempt created while this insert waited
                // for it is then simply there (under REPEATABLE READ: 40001, as it was committed after the
                // statement's snapshot)
                try (Statement st = c.createStatement()) {
                    st.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
                }
                ensureGate(c, name);
            }
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

    private void ensureGate(Connection c, String name) throws SQLException {
        String insert = switch (dialect) {
            case POSTGRESQL -> "INSERT INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at)"
                    + " VALUES (?, '', 'g', 0, now(), now()) ON CONFLICT DO NOTHING";
            case MARIADB, MYSQL -> "INSERT IGNORE INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at)"
                    + " VALUES (?, '', 'g', 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))";
            case SQLITE -> null; // SQLite serialises writers itself
        };
        if (insert != null) {
            try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setString(1, name);
                ps.executeUpdate();
            }
        }
    }

    private AcquireResult decide(Connection c, String name, LockMode mode, String owner, long leaseMillis)
            throws SQLException {
        if (dialect == Dialect.SQLITE) {
            // take the write lock first, so the read below and the write after it are one serial step
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                    + " WHERE name = ? AND expires_at <= " + now)) {
                ps.setString(1, name);
                ps.executeUpdate();
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + rw
                    + " WHERE name = ? AND owner = '' FOR UPDATE")) {
                ps.setString(1, name);
                ps.executeQuery().close();
            }
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                    + " WHERE name = ? AND owner <> '' AND expires_at <= " + now)) {
                ps.setString(1, name);
                ps.executeUpdate();
            }
        }
        String blocker = null;
        long blockerToken = -1;
        long blockerRemaining = -1;
        try (PreparedStatement ps = c.prepareStatement("SELECT owner, mode, token, " + remainingMillis()
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
        long token = nextToken(c);
        upsert(c, name, owner, code(mode), token, leaseMillis);
        return new AcquireResult.Granted(token);
    }

    private void upsert(Connection c, String name, String owner, String mode, long token, long leaseMillis)
            throws SQLException {
        String values = "VALUES (?, ?, ?, ?, " + now + ", " + plus("?") + ")";
        String sql = switch (dialect) {
            case POSTGRESQL -> "INSERT INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at) " + values
                    + " ON CONFLICT (name, owner) DO UPDATE SET mode = excluded.mode, token = excluded.token,"
                    + " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at";
            case MARIADB, MYSQL -> "INSERT INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at) " + values
                    + " ON DUPLICATE KEY UPDATE mode = VALUES(mode), token = VALUES(token),"
                    + " acquired_at = VALUES(acquired_at), expires_at = VALUES(expires_at)";
            case SQLITE -> "INSERT INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at) " + values
                    + " ON CONFLICT (name, owner) DO UPDATE SET mode = excluded.mode, token = excluded.token,"
                    + " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at";
        };
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setString(3, mode);
            ps.setLong(4, token);
            ps.setLong(5, leaseMillis);
            ps.executeUpdate();
        }
    }

    private long nextToken(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            switch (dialect) {
                case POSTGRESQL -> {
                    try (ResultSet rs = st.executeQuery("SELECT nextval('" + table + "_token_seq')")) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
                case MARIADB -> {
                    try (ResultSet rs = st.executeQuery("SELECT NEXTVAL(" + table + "_token_seq)")) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
                case MYSQL -> {
                    st.executeUpdate("UPDATE " + table + "_token SET value = LAST_INSERT_ID(value + 1) WHERE id = 1");
                    try (ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
                default -> {
                    st.executeUpdate("UPDATE " + table + "_token SET value = value + 1 WHERE id = 1");
                    try (ResultSet rs = st.executeQuery("SELECT value FROM " + table + "_token WHERE id = 1")) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
            }
        }
    }

    boolean release(Connection c, LeaseKey key, String channel) throws SQLException {
        int n;
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                + " WHERE name = ? AND owner = ? AND token = ? AND mode = ?")) {
            ps.setString(1, key.name());
            ps.setString(2, key.owner());
            ps.setLong(3, key.token());
            ps.setString(4, code(key.mode()));
            n = ps.executeUpdate();
        }
        if (n > 0 && channel != null) {
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
                ps.setString(1, channel);
                ps.setString(2, key.name());
                ps.execute();
            }
        }
        return n > 0;
    }

    void abandon(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                + " WHERE name = ? AND owner = ? AND mode = 'p'")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.executeUpdate();
        }
    }

    Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException {
        Set<LeaseKey> renewed = new HashSet<>();
        String predicate = LeaseTable.keyPredicate(keys.size());
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + rw + " SET expires_at = " + plus("?")
                + " WHERE expires_at > " + now + " AND mode IN ('r', 'w') AND " + predicate)) {
            ps.setLong(1, leaseMillis);
            LeaseTable.bindKeys(ps, 2, keys);
            if (ps.executeUpdate() == keys.size()) {
                renewed.addAll(keys);
                return renewed;
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token, mode FROM " + rw
                + " WHERE expires_at > " + now + " AND mode IN ('r', 'w') AND " + predicate)) {
            LeaseTable.bindKeys(ps, 1, keys);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    LockMode m = rs.getString(4).equals("r") ? LockMode.READ : LockMode.WRITE;
                    renewed.add(new LeaseKey(name(rs, 1), rs.getString(2), rs.getLong(3), m));
                }
            }
        }
        return renewed;
    }

    /** Whether the holder's row (name, owner, token, mode) is live now, by the database clock. */
    boolean isHeld(Connection c, LeaseKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + rw + " WHERE expires_at > " + now
                + " AND mode = ? AND " + LeaseTable.keyPredicate(1))) {
            ps.setString(1, code(key.mode()));
            LeaseTable.bindKeys(ps, 2, List.of(key));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }
}
