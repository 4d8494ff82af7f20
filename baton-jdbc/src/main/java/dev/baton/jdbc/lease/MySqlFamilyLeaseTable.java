package dev.baton.jdbc.lease;

import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.internal.LeaseKeys;
import dev.baton.jdbc.internal.SqlClocks;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * MariaDB and MySQL 8. Times are {@code UTC_TIMESTAMP(6)}, immune to session time zones. The conditional
 * assignments of {@code ON DUPLICATE KEY UPDATE} rely on MySQL evaluating them left to right, each seeing the
 * columns already assigned: the first decides (the row expired and nobody else ahead in line) and stamps
 * {@code acquired_at} with the statement's now; the others follow that stamp, and {@code expires_at}, which
 * they test, is assigned last. (A stamp equal to the statement's now on an expired row is this statement's: an
 * earlier grant in the same microsecond would still be unexpired, unless also released within it, which could at
 * worst let this grant past the line to a free row, never past a holder. The grant's result is read the same way.)
 *
 * <p>MariaDB: one statement, a fresh token from {@code NEXTVAL} drawn under the row lock, and
 * {@code RETURNING} gives the row to winner and loser. MySQL: no sequences and no {@code RETURNING}, so one
 * transaction: bump a counter row ({@code LAST_INSERT_ID(value + 1)}, holding the counter's row lock to
 * commit), upsert with that token, read the row back.
 *
 * <p>A waiter granted the lock out of the line removes its ticket in a statement of its own after the grant
 * (MariaDB), or in the grant's short transaction (MySQL, whose grant is a transaction anyway). MariaDB's shipped
 * DDL keeps the line in a MEMORY table (tickets cost no durable commit); MySQL's keeps it in InnoDB (Group
 * Replication refuses writes to tables of other engines). The statements work on either engine.
 */
final class MySqlFamilyLeaseTable extends LeaseTable {
    private static final Logger LOG = LoggerFactory.getLogger(MySqlFamilyLeaseTable.class);
    /** The MySQL-family clock, as every MySQL/MariaDB statement of Baton reads it: UTC, whatever the session time zone. */
    static final String NOW = SqlClocks.MYSQL_NOW;
    private final boolean mariadb;
    private final String tokenSource;
    private final String acquireSql;

    MySqlFamilyLeaseTable(String table, boolean mariadb) {
        super(table);
        this.mariadb = mariadb;
        this.tokenSource = mariadb ? table + "_token_seq" : table + "_token";
        // the row may be taken if it is free and nobody else is ahead in line: the line's condition names the
        // row's own name and the caller (two parameters per use, bound by bindTakes; MariaDB refuses VALUES()
        // inside a subquery)
        String ahead = "EXISTS (SELECT 1 FROM " + queue + " o WHERE o.name = " + table + ".name"
                + " AND o.owner <> ? AND o.expires_at > " + NOW
                + " AND NOT EXISTS (SELECT 1 FROM " + queue + " m WHERE m.name = o.name AND m.owner = ?"
                + " AND (m.enqueued_at < o.enqueued_at OR (m.enqueued_at = o.enqueued_at AND m.owner < o.owner))))";
        String take = "(expires_at <= " + NOW + " AND NOT " + ahead + ")";
        // the line is read once, in the first assignment, which stamps acquired_at with this statement's now; the
        // others test that stamp (a subquery per assignment cost about 0.1 ms each on MariaDB 10.11)
        String taken = "(acquired_at = VALUES(acquired_at) AND expires_at <= " + NOW + ")";
        String newToken = mariadb ? "NEXTVAL(" + tokenSource + ")" : "LAST_INSERT_ID()";
        String upsert = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                + " VALUES (?, ?, " + newToken + ", " + NOW + ", " + NOW + " + INTERVAL ? MICROSECOND)"
                + " ON DUPLICATE KEY UPDATE"
                + " acquired_at = IF(" + take + ", VALUES(acquired_at), acquired_at),"
                + " owner = IF(" + taken + ", VALUES(owner), owner),"
                + " token = IF(" + taken + ", " + newToken + ", token),"
                + " expires_at = IF(" + taken + ", VALUES(expires_at), expires_at)";
        this.acquireSql = mariadb
                ? upsert + " RETURNING owner, token, TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at),"
                  + " acquired_at = " + NOW
                : upsert;
    }

    /** The waiter behind another waits for that waiter's bell ({@link LineBells}). */
    @Override
    boolean namesPredecessor() {
        return true;
    }

    /** Microseconds since 1970 by the UTC clock the line is written with. */
    @Override
    String placeSinceSql(String column) {
        return "TIMESTAMPDIFF(MICROSECOND, '1970-01-01', " + column + ")";
    }

    /** One statement on a MariaDB server ({@code RETURNING}), where bells are rung. */
    @Override
    public long enqueueTellingPlace(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(enqueueSql() + " RETURNING " + placeSinceSql("enqueued_at"))) {
            ps.setString(1, name);
            ps.setString(2, owner);
            bindLease(ps, 3, leaseMillis);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw lineFull(e);
        }
    }

    /** OR terms; MariaDB plans more than about 1,000 badly (see {@link LeaseTable#renewBatch}). */
    @Override
    public int renewBatch() {
        return 1_000;
    }

    @Override
    public String sessionMarkerInsert() {
        return "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 0, " + NOW
                + ", '" + MARKER_EXPIRES + "') ON DUPLICATE KEY UPDATE name = name";
    }

    @Override
    public Dialect dialect() {
        return mariadb ? Dialect.MARIADB : Dialect.MYSQL;
    }

    @Override
    String nowSql() {
        return NOW;
    }

    @Override
    String nowPlusLeaseSql() {
        return NOW + " + INTERVAL ? MICROSECOND";
    }

    @Override
    void bindLease(PreparedStatement ps, int index, long leaseMillis) throws SQLException {
        ps.setLong(index, leaseMillis * 1000);
    }

    @Override
    String remainingSql(String column) {
        return "TIMESTAMPDIFF(MICROSECOND, " + NOW + ", " + column + ")";
    }

    @Override
    Duration remaining(long value) {
        return Duration.of(value, ChronoUnit.MICROS);
    }

    @Override
    String enqueueSql() {
        return "INSERT INTO " + queue + " (name, owner, enqueued_at, expires_at) VALUES (?, ?, " + NOW + ", "
                + nowPlusLeaseSql() + ") ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at)";
    }

    /** MySQL/MariaDB "The table is full" (ER_RECORD_FILE_FULL): a MEMORY table at its size limit. */
    private static final int TABLE_FULL = 1114;

    /**
     * As {@link LeaseTable#enqueue}; a line that is full (MariaDB's shipped DDL keeps it in a MEMORY table, whose
     * size was fixed by {@code max_heap_table_size} when it was created) is an error that says so and what to do.
     */
    @Override
    public void enqueue(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        try {
            super.enqueue(c, name, owner, leaseMillis);
        } catch (SQLException e) {
            throw lineFull(e);
        }
    }

    /** {@code e}, or, if it says the line's table is full, an error that says so and what to do. */
    private SQLException lineFull(SQLException e) {
        if (e.getErrorCode() != TABLE_FULL) {
            return e;
        }
        return new SQLException("the line of waiters " + queue + " is full, so this waiter cannot take its place"
                + " (" + e.getMessage() + "). If it is a MEMORY table (MariaDB's shipped DDL), its size is"
                + " max_heap_table_size as it was when the table was created or, after a server restart, first"
                + " opened: raise max_heap_table_size globally (and in the server's configuration) and recreate"
                + " the table (ALTER TABLE " + queue + " ENGINE = MEMORY), or use ENGINE = InnoDB (a durable commit"
                + " per ticket); otherwise the server's disk or tablespace is full", e.getSQLState(),
                e.getErrorCode(), e);
    }

    @Override
    public AcquireResult tryAcquire(Connection c, String name, String owner, long leaseMillis, boolean ticketed)
            throws SQLException {
        try {
            if (!mariadb) {
                return acquireMySql(c, name, owner, leaseMillis);
            }
            // the grant is one statement in auto-commit: its row and next-key locks end with it. (In one
            // transaction with the removal of the caller's ticket, a grantee cut off between the two kept them, and
            // every other client's new ticket for the lock waited on them: JdbcLeaseTableIT.aGranteeStalled…)
            AcquireResult result = acquireMariaDb(c, name, owner, leaseMillis);
            if (ticketed && result instanceof AcquireResult.Granted) {
                removeTicketOfGrantee(c, name, owner);
            }
            return result;
        } catch (SQLException e) {
            if (DialectTraits.of(dialect()).isSerializationFailure(e)) {
                // InnoDB: concurrent upserts of a missing row can deadlock on its gap; the victim was rolled
                // back and the survivor's statement went on: a lost race, not an error (the caller retries)
                return new AcquireResult.Busy(null, -1, null);
            }
            throw e;
        }
    }

    /**
     * Removes the ticket of a waiter that was just granted the lock, in a statement of its own. The grant stands if
     * this fails (the connection broke, say): the ticket then ends like a dead waiter's, one lease after its last
     * refresh, and until then it keeps the lock for its owner after the release.
     */
    private void removeTicketOfGrantee(Connection c, String name, String owner) {
        try {
            withdraw(c, name, owner);
        } catch (SQLException e) {
            LOG.warn("granted '{}' to {}, but could not remove its ticket from the line ({}); it expires within one"
                    + " lease", name, owner, e.getMessage());
        }
    }

    private AcquireResult acquireMariaDb(Connection c, String name, String owner, long leaseMillis)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(acquireSql)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, leaseMillis * 1000);
            bindTakes(ps, owner);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                String rowOwner = rs.getString(1);
                long token = rs.getLong(2);
                // granted iff this statement wrote the row: our owner and acquired_at = this statement's now
                if (owner.equals(rowOwner) && rs.getBoolean(4)) {
                    return new AcquireResult.Granted(token);
                }
                return busy(rowOwner, token, rs.getLong(3));
            }
        }
    }

    private AcquireResult acquireMySql(Connection c, String name, String owner, long leaseMillis)
            throws SQLException {
        boolean ac = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            try (Statement st = c.createStatement()) {
                st.executeUpdate("UPDATE " + tokenSource + " SET value = LAST_INSERT_ID(value + 1) WHERE id = 1");
            }
            try (PreparedStatement ps = c.prepareStatement(acquireSql)) {
                ps.setString(1, name);
                ps.setString(2, owner);
                ps.setLong(3, leaseMillis * 1000);
                bindTakes(ps, owner);
                ps.executeUpdate();
            }
            AcquireResult result;
            try (PreparedStatement ps = c.prepareStatement("SELECT owner, token,"
                    + " TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at), token = LAST_INSERT_ID()"
                    + " FROM " + table + " WHERE name = ?")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    result = rs.getBoolean(4) ? new AcquireResult.Granted(rs.getLong(2))
                            : busy(rs.getString(1), rs.getLong(2), rs.getLong(3));
                }
            }
            if (result instanceof AcquireResult.Granted) {
                withdraw(c, name, owner); // the caller's ticket, if any, in the same commit
            }
            c.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(ac);
        }
    }

    /** The caller, twice for the line's condition in the upsert's first assignment (from parameter 4). */
    private static void bindTakes(PreparedStatement ps, String owner) throws SQLException {
        ps.setString(4, owner);
        ps.setString(5, owner);
    }

    private static AcquireResult busy(String holder, long token, long remainingMicros) {
        // (not nanos * 1000: a marker row's remaining microseconds would overflow a long of nanoseconds)
        return new AcquireResult.Busy(holder, token, Duration.of(Math.max(0, remainingMicros), ChronoUnit.MICROS));
    }

    @Override
    public AcquireResult.Busy peek(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT owner, token,"
                + " TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at) FROM " + table
                + " WHERE name = ? AND owner IS NOT NULL AND expires_at > " + NOW)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? (AcquireResult.Busy) busy(rs.getString(1), rs.getLong(2), rs.getLong(3)) : null;
            }
        }
    }

    @Override
    public boolean release(Connection c, LeaseKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET owner = NULL,"
                + " expires_at = LEAST(expires_at, " + NOW + ") WHERE name = ? AND owner = ? AND token = ?")) {
            ps.setString(1, key.name());
            ps.setString(2, key.owner());
            ps.setLong(3, key.token());
            return ps.executeUpdate() > 0;
        }
    }

    @Override
    public Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException {
        String predicate = LeaseKeys.predicate(keys.size());
        int updated;
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET expires_at = " + NOW
                + " + INTERVAL ? MICROSECOND WHERE expires_at > " + NOW + " AND " + predicate)) {
            ps.setLong(1, leaseMillis * 1000);
            LeaseKeys.bind(ps, 2, keys);
            updated = ps.executeUpdate();
        }
        if (updated == keys.size()) {
            return new HashSet<>(keys);
        }
        // some were not ours any more: the renewed ones are exactly those still matching and unexpired
        Set<LeaseKey> renewed = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token FROM " + table
                + " WHERE expires_at > " + NOW + " AND " + predicate)) {
            LeaseKeys.bind(ps, 1, keys);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.add(new LeaseKey(name(rs, 1), rs.getString(2), rs.getLong(3)));
                }
            }
        }
        return renewed;
    }

    /** Names are stored as UTF-8 bytes (VARBINARY) so that comparison is exact. */
    private static String name(ResultSet rs, int column) throws SQLException {
        return new String(rs.getBytes(column), StandardCharsets.UTF_8);
    }

    @Override
    public List<LockInfo> inspect(Connection c) throws SQLException {
        List<LockInfo> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token, acquired_at, expires_at,"
                + " owner IS NOT NULL AND expires_at > " + NOW + " FROM " + table + " ORDER BY name");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                boolean held = rs.getBoolean(6);
                out.add(new LockInfo(name(rs, 1), held ? rs.getString(2) : null, rs.getLong(3),
                        rs.getObject(4, LocalDateTime.class).toInstant(ZoneOffset.UTC),
                        rs.getObject(5, LocalDateTime.class).toInstant(ZoneOffset.UTC), held));
            }
        }
        return out;
    }

    @Override
    public int purge(Connection c, long olderThanMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table
                + " WHERE expires_at < " + NOW + " - INTERVAL ? MICROSECOND")) {
            ps.setLong(1, olderThanMillis * 1000);
            return ps.executeUpdate();
        }
    }

    @Override
    public List<String> requiredObjects() {
        return List.of(table, tokenSource, table + "_rw", queue);
    }

    @Override
    public String probe(String object) {
        return "SELECT 1 FROM " + object + " WHERE 1 = 0";
    }
}
