package dev.baton.jdbc.lease;

import dev.baton.LockInfo;
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
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What MariaDB and MySQL 8 share: the clock ({@code UTC_TIMESTAMP(6)}, immune to session time zones), the line,
 * the report of a row, renewal, the durable release, listing and purging. The grant is each server's own:
 * {@link MariaDbLeaseTable} (a sequence, {@code RETURNING}, and releases in a MEMORY table) and
 * {@link MySqlLeaseTable} (one short transaction around a counter row and an upsert).
 *
 * <p>A waiter granted the lock out of the line removes its ticket in a statement of its own after the grant
 * (MariaDB), or in the grant's short transaction (MySQL, whose grant is a transaction anyway). MariaDB's shipped
 * DDL keeps the line in a MEMORY table (tickets cost no durable commit); MySQL's keeps it in InnoDB (Group
 * Replication refuses writes to tables of other engines). The statements work on either engine.
 */
abstract sealed class MySqlFamilyLeaseTable extends LeaseTable permits MariaDbLeaseTable, MySqlLeaseTable {
    static final Logger LOG = LoggerFactory.getLogger(MySqlFamilyLeaseTable.class);
    /** The MySQL-family clock, as every MySQL/MariaDB statement of Baton reads it: UTC, whatever the session time zone. */
    static final String NOW = SqlClocks.MYSQL_NOW;
    /** Where tokens come from: MariaDB's sequence, MySQL's counter row. */
    final String tokenSource;
    /**
     * The read of a lease row as {@link #report} gives it (a grant that could not take it, {@link #peek}); made at
     * first use, as it depends on the subclass's {@link #heldSql}.
     */
    private volatile String reportSql;

    MySqlFamilyLeaseTable(String table, String tokenSource) {
        super(table);
        this.tokenSource = tokenSource;
    }

    private String reportSql() {
        String sql = reportSql;
        if (sql == null) {
            sql = "SELECT owner, token, TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at), " + heldSql(table)
                    + " FROM " + table + " WHERE name = ?";
            reportSql = sql;
        }
        return sql;
    }

    /**
     * The grant: takes the row if it is free and nobody else is ahead in line, or reports its holder. A lost race
     * (InnoDB's deadlock victim) is reported busy by {@link #tryAcquire}.
     */
    abstract AcquireResult grant(Connection c, String name, String owner, long leaseMillis, boolean ticketed)
            throws SQLException;

    /**
     * The line's condition for a grant: nobody else ahead of the caller. {@code mayHaveTicket}: ahead of the caller's
     * own ticket (parameters: owner, owner); else any live ticket of another owner is ahead of it (parameter: owner):
     * one subquery, not two, about 0.04 ms less of MariaDB's planning per statement here.
     */
    String nobodyAhead(boolean mayHaveTicket) {
        // the line's condition names the row's own name and the caller (MySQL refuses VALUES() inside a subquery)
        return "NOT EXISTS (SELECT 1 FROM " + queue + " o WHERE " + aheadCondition(table + ".name", mayHaveTicket)
                + ")";
    }

    /** When the grant in lease row {@code row} ended or ends: its {@code expires_at} (MariaDB: or its release). */
    String endSql(String row) {
        return row + ".expires_at";
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
    Instant instant(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
    }

    @Override
    String enqueueSql() {
        return "INSERT INTO " + queue + " (name, owner, enqueued_at, expires_at) VALUES (?, ?, " + NOW + ", "
                + nowPlusLeaseSql() + ") ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at)";
    }

    /** MySQL/MariaDB "The table is full" (ER_RECORD_FILE_FULL): a MEMORY table at its size limit. */
    static final int TABLE_FULL = 1114;

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

    @Override
    public boolean isLineFull(SQLException e) {
        return e.getErrorCode() == TABLE_FULL;
    }

    @Override
    String readName(ResultSet rs, int column) throws SQLException {
        return name(rs, column);
    }

    /** {@code e}, or, if it says the line's table is full, an error that says so and what to do. */
    private SQLException lineFull(SQLException e) {
        if (e.getErrorCode() != TABLE_FULL) {
            return e;
        }
        return new SQLException("the line of waiters " + queue + " is full, so waiters wait without a place in it,"
                + " polling, until there is room; dead waiters' tickets are deleted as they expire, so live ones fill it"
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
            return grant(c, name, owner, leaseMillis, ticketed);
        } catch (SQLException e) {
            if (DialectTraits.of(dialect()).isSerializationFailure(e)) {
                // InnoDB: concurrent inserts (MySQL: upserts) of a missing row can deadlock on its gap; the victim
                // was rolled back and the survivor's statement went on: a lost race, not an error (the caller
                // retries)
                return new AcquireResult.Busy(null, -1, null);
            }
            throw e;
        }
    }

    /**
     * The lease row of {@code name}: null if there is none; held, its holder, token and remaining lease; free
     * (expired, or on MariaDB its grant released), its token with no holder and no remaining lease.
     */
    AcquireResult.Busy report(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(reportSql())) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                if (!rs.getBoolean(4)) {
                    return new AcquireResult.Busy(null, rs.getLong(2), Duration.ZERO);
                }
                return busy(rs.getString(1), rs.getLong(2), rs.getLong(3));
            }
        }
    }

    static AcquireResult.Busy busy(String holder, long token, long remainingMicros) {
        // (not nanos * 1000: a marker row's remaining microseconds would overflow a long of nanoseconds)
        return new AcquireResult.Busy(holder, token, Duration.of(Math.max(0, remainingMicros), ChronoUnit.MICROS));
    }

    @Override
    public AcquireResult.Busy peek(Connection c, String name) throws SQLException {
        AcquireResult.Busy row = report(c, name);
        return row == null || row.holder() == null ? null : row; // a held row always names its holder
    }

    /** The durable write (MariaDB: unless its table of releases has room). */
    @Override
    public boolean release(Connection c, LeaseKey key) throws SQLException {
        return releaseDurably(c, key);
    }

    static void bindKey(PreparedStatement ps, LeaseKey key) throws SQLException {
        ps.setString(1, key.name());
        ps.setString(2, key.owner());
        ps.setLong(3, key.token());
    }

    /**
     * MariaDB and MySQL: the durable write, never an entry in the table of releases. A forced release ends another
     * client's lease, and a client of an earlier version, which does not read that table, would go on renewing and
     * holding a lease that newer clients see free; it sees the row written free (rare, so one flush is fine).
     */
    @Override
    public boolean forceRelease(Connection c, LeaseKey key) throws SQLException {
        return releaseDurably(c, key);
    }

    /** Frees the row where name, owner and token match: a durable write. */
    boolean releaseDurably(Connection c, LeaseKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET owner = NULL,"
                + " expires_at = LEAST(expires_at, " + NOW + ") WHERE name = ? AND owner = ? AND token = ?")) {
            bindKey(ps, key);
            return ps.executeUpdate() > 0;
        }
    }

    @Override
    public Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException {
        String predicate = LeaseKeys.predicate(keys.size());
        int updated;
        // (a released grant is not renewed: on MariaDB it is free, though its row is unexpired; the keys' owners are
        // never null, so the holder term of heldSql changes nothing for MySQL)
        String live = heldSql(table);
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET expires_at = " + NOW
                + " + INTERVAL ? MICROSECOND WHERE " + live + " AND " + predicate)) {
            ps.setLong(1, leaseMillis * 1000);
            LeaseKeys.bind(ps, 2, keys);
            updated = ps.executeUpdate();
        }
        if (updated == keys.size()) {
            return new HashSet<>(keys);
        }
        // some were not ours any more: the renewed ones are exactly those still matching and held
        Set<LeaseKey> renewed = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token FROM " + table
                + " WHERE " + live + " AND " + predicate)) {
            LeaseKeys.bind(ps, 1, keys);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.add(new LeaseKey(name(rs, 1), rs.getString(2), rs.getLong(3)));
                }
            }
        }
        return renewed;
    }

    @Override
    String nameAt(ResultSet rs, int column) throws SQLException {
        return name(rs, column);
    }

    /** Names are stored as UTF-8 bytes (VARBINARY) so that comparison is exact. */
    private static String name(ResultSet rs, int column) throws SQLException {
        return new String(rs.getBytes(column), StandardCharsets.UTF_8);
    }

    @Override
    public List<LockInfo> inspect(Connection c) throws SQLException {
        List<LockInfo> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token, acquired_at, " + endSql(table) + ","
                + " " + heldSql(table) + " FROM " + table + " ORDER BY name");
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

    /**
     * Deletes the rows whose last lease ended more than {@code olderThanMillis} ago (on MariaDB, released or expired)
     *.
     */
    @Override
    public int purge(Connection c, long olderThanMillis) throws SQLException {
        int purged;
        // (on MariaDB a released row counts from its release; free either way, and the sequence keeps tokens
        // increasing for the row inserted after it)
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table
                + " WHERE " + endSql(table) + " < " + NOW + " - INTERVAL ? MICROSECOND")) {
            ps.setLong(1, olderThanMillis * 1000);
            purged = ps.executeUpdate();
        }
        return purged;
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
