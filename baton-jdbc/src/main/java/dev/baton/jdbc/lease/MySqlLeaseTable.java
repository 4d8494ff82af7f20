package dev.baton.jdbc.lease;

import dev.baton.jdbc.internal.TokenCounters;
import dev.baton.jdbc.Dialect;
import dev.baton.spi.AcquireResult;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * MySQL 8.
 *
 * <p>MySQL: no sequences and no {@code RETURNING}, so one transaction: bump a counter row
 * ({@code LAST_INSERT_ID(value + 1)}, holding the counter's row lock to commit), upsert with that token, read the
 * row back. The upsert's conditional assignments rely on MySQL evaluating them left to right, each seeing the
 * columns already assigned: the first decides (the row expired and nobody else ahead in line) and stamps
 * {@code acquired_at} with the statement's now; the others follow that stamp, and {@code expires_at}, which they
 * test, is assigned last. (A stamp equal to the statement's now on an expired row is this statement's: an earlier
 * grant in the same microsecond would still be unexpired, unless also released within it, which could at worst
 * let this grant past the line to a free row, never past a holder. The grant's result is read the same way.)
 */
final class MySqlLeaseTable extends MySqlFamilyLeaseTable {
    /** The upsert of the grant's transaction. */
    private final String acquireSql;

    MySqlLeaseTable(String table) {
        super(table, table + "_token");
        this.acquireSql = mySqlAcquireSql();
    }

    /**
     * MySQL's upsert, in the transaction that drew the token ({@code LAST_INSERT_ID()}): the first assignment
     * decides and stamps {@code acquired_at} with this statement's now; the others test that stamp.
     */
    private String mySqlAcquireSql() {
        String take = "(expires_at <= " + NOW + " AND " + nobodyAhead(true) + ")";
        // the line is read once, in the first assignment, which stamps acquired_at with this statement's now; the
        // others test that stamp (a subquery per assignment cost about 0.1 ms each on MariaDB 10.11)
        String taken = "(acquired_at = VALUES(acquired_at) AND expires_at <= " + NOW + ")";
        // (a SELECT, not VALUES: a missing row, never used or purged, is inserted only if nobody else is ahead in line
        // either; with nobody to insert, nothing is updated either, as the first assignment would not take the row)
        return "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                + " SELECT ?, ?, LAST_INSERT_ID(), " + NOW + ", " + NOW + " + INTERVAL ? MICROSECOND FROM DUAL"
                + " WHERE NOT EXISTS (SELECT 1 FROM " + queue + " o WHERE " + aheadCondition("?", true) + ")"
                + " ON DUPLICATE KEY UPDATE"
                + " acquired_at = IF(" + take + ", VALUES(acquired_at), acquired_at),"
                + " owner = IF(" + taken + ", VALUES(owner), owner),"
                + " token = IF(" + taken + ", LAST_INSERT_ID(), token),"
                + " expires_at = IF(" + taken + ", VALUES(expires_at), expires_at)";
    }

    /** The counter row the DDL inserts, which every token draw updates. */
    @Override
    String readyRow() {
        return "(SELECT 1 FROM " + tokenSource + " WHERE id = 1)";
    }

    @Override
    public Dialect dialect() {
        return Dialect.MYSQL;
    }

    @Override
    AcquireResult grant(Connection c, String name, String owner, long leaseMillis, boolean ticketed)
            throws SQLException {
        return acquireMySql(c, name, owner, leaseMillis);
    }

    private AcquireResult acquireMySql(Connection c, String name, String owner, long leaseMillis)
            throws SQLException {
        boolean ac = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            try (Statement st = c.createStatement()) {
                TokenCounters.bump(st, tokenSource, "UPDATE " + tokenSource + " SET value = LAST_INSERT_ID(value + 1) WHERE id = 1");
            }
            try (PreparedStatement ps = c.prepareStatement(acquireSql)) {
                ps.setString(1, name);
                ps.setString(2, owner);
                ps.setLong(3, leaseMillis * 1000);
                bindTakes(ps, name, owner);
                ps.executeUpdate();
            }
            AcquireResult result;
            try (PreparedStatement ps = c.prepareStatement("SELECT owner, token,"
                    + " TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at), token = LAST_INSERT_ID()"
                    + " FROM " + table + " WHERE name = ?")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    // no row: it was missing, and the line kept it for a waiter ahead
                    result = !rs.next() ? new AcquireResult.Busy(null, -1, null)
                            : rs.getBoolean(4) ? new AcquireResult.Granted(rs.getLong(2))
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

    /**
     * The line's condition of the insert (name, owner, owner from parameter 4), then the caller twice for the line's
     * condition in the upsert's first assignment.
     */
    private static void bindTakes(PreparedStatement ps, String name, String owner) throws SQLException {
        int next = bindAhead(ps, 4, name, owner);
        ps.setString(next, owner);
        ps.setString(next + 1, owner);
    }

}
