package dev.baton.jdbc.lease;

import dev.baton.jdbc.Dialect;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * MariaDB.
 *
 * <p>MariaDB's grant, in up to three statements, each deciding on its own:
 * <ol>
 *   <li>an {@code UPDATE} of the row where it exists, is free (expired, or its grant released) and nobody else is
 *       ahead in line, drawing the token with {@code NEXTVAL} under the row lock; the token comes back in the OK
 *       packet ({@code LAST_INSERT_ID(expr)});</li>
 *   <li>if it updated nothing, an {@code INSERT … SELECT … WHERE NOT EXISTS … RETURNING} of the row, which returns
 *       the token only if this statement inserted the row (a name never used, or purged; of two inserting at once,
 *       one fails on the key and is reported the holder, or InnoDB ends one as a deadlock victim: a lost race, the
 *       caller tries again);</li>
 *   <li>if the row exists after all, a read of it, reported to the caller as its holder (or, free — kept for the
 *       line, or freed since the first statement — with no holder and no remaining lease).</li>
 * </ol>
 * Whether this statement granted is told by the server (rows updated, a row returned), never inferred from the
 * values in the row: a sequence set back (restarted, recreated, restored) may make tokens repeat, never two
 * holders. An uncontended acquisition of a name used before is the first statement alone.
 *
 * <p>MariaDB's release writes no InnoDB row: it adds the grant's token and {@code acquired_at} to
 * {@code <table>_released}, a MEMORY table (shipped DDL), so it costs no redo-log flush (grants and renewals are
 * the durable commits of a lease). A row whose grant has an entry there is free, as an expired one is
 * ({@link #heldSql}), and the next grant takes it with a new token and {@code acquired_at}, which no entry names.
 * A server restart empties the table: each lease released before it counts as held until it ends, as a PostgreSQL
 * release lost with its unflushed WAL does; never held by two. Entries that free nothing any more (the lease was
 * taken again, or ended) are deleted when the table is full and by {@link #purge}; if the table is full of entries
 * of unexpired leases, the release frees the row by the durable write. {@code acquired_at} with the token keeps an
 * entry from freeing a later grant that drew the same token from a sequence set back.
 */
final class MariaDbLeaseTable extends MySqlFamilyLeaseTable {
    /** The insert of a row not there yet, which returns the token only if it inserted the row. */
    private final String insertSql;
    /**
     * The grant of an existing free row, by an {@code UPDATE} that hands back the token, for a caller that
     * may have a place in line ({@code takeSql}) and for one that has none ({@code takeSqlNotInLine}).
     */
    private final String takeSql;
    private final String takeSqlNotInLine;
    /** The MEMORY table of releases ({@code <table>_released}). */
    private final String released;
    /** Whether a release has fallen back to the durable write because the table of releases was full (logged once). */
    private volatile boolean warnedFull;
    /**
     * Until when ({@link System#nanoTime()}) releases go straight to the durable write: a second after a release
     * found the table of releases full even after clearing it, so that a full table costs each release one
     * statement, not four.
     */
    private volatile long fullUntil = System.nanoTime();
    private static final long FULL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** MySQL/MariaDB "Duplicate entry for key" (ER_DUP_ENTRY). */
    private static final int DUPLICATE_KEY = 1062;

    MariaDbLeaseTable(String table) {
        super(table, table + "_token_seq");
        this.released = table + "_released";
        // (not INSERT IGNORE: it would also turn a bad value into a warning and a wrong row; a row there already
        // makes this insert nothing, and draws no token)
        this.insertSql = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                + " SELECT ?, ?, NEXTVAL(" + tokenSource + "), " + NOW + ", " + NOW + " + INTERVAL ? MICROSECOND"
                + " FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM " + table + " WHERE name = ?)"
                // a missing row (never used, or purged) is inserted only if nobody else is ahead in line either
                + " AND NOT EXISTS (SELECT 1 FROM " + queue + " o WHERE " + aheadCondition("?", true) + ")"
                + " RETURNING token";
        this.takeSql = mariaDbTakeSql(nobodyAhead(true));
        this.takeSqlNotInLine = mariaDbTakeSql(nobodyAhead(false));
    }

    /**
     * MariaDB's grant of a row that exists and is free (expired, or its grant released) with nobody else ahead in
     * line, the token drawn under the row lock; it comes back in the OK packet ({@code LAST_INSERT_ID(expr)}), so no
     * {@code RETURNING} (MariaDB 10.11 has none for {@code UPDATE}). Parameters: owner, lease (µs), name, then the
     * owner once for each {@code ?} of {@code nobodyAhead}.
     */
    private String mariaDbTakeSql(String nobodyAhead) {
        return "UPDATE " + table + " SET token = LAST_INSERT_ID(NEXTVAL(" + tokenSource + ")), owner = ?,"
                + " acquired_at = " + NOW + ", expires_at = " + NOW + " + INTERVAL ? MICROSECOND"
                + " WHERE name = ? AND (expires_at <= " + NOW + " OR " + releasedSql(table) + ") AND " + nobodyAhead;
    }

    /** The entry {@code r} of the grant now in lease row {@code row}, as a {@code FROM … WHERE}. */
    private String entryOf(String row) {
        return " FROM " + released + " r WHERE r.token = " + row + ".token AND r.acquired_at = " + row + ".acquired_at";
    }

    /** Whether the grant now in lease row {@code row} was released (has an entry in the MEMORY table). */
    private String releasedSql(String row) {
        return "EXISTS (SELECT 1" + entryOf(row) + ")";
    }

    /** When the grant in lease row {@code row} ended or ends: its {@code expires_at}, or, if released earlier, when its entry says. */
    @Override
    String endSql(String row) {
        return "LEAST(" + row + ".expires_at, COALESCE((SELECT r.released_at"
                + entryOf(row) + "), " + row + ".expires_at))";
    }

    /** Held: a holder, an unexpired lease and no release of its grant in the MEMORY table. */
    @Override
    String heldSql(String row) {
        return super.heldSql(row) + " AND NOT " + releasedSql(row);
    }

    @Override
    public Dialect dialect() {
        return Dialect.MARIADB;
    }

    @Override
    AcquireResult grant(Connection c, String name, String owner, long leaseMillis, boolean ticketed)
            throws SQLException {
        // each statement of the grant is auto-committed: its row and next-key locks end with it. (In one
        // transaction with the removal of the caller's ticket, a grantee cut off between the two kept them, and
        // every other client's new ticket for the lock waited on them: JdbcLeaseTableIT.aGranteeStalled…)
        AcquireResult result = acquireMariaDb(c, name, owner, leaseMillis, ticketed);
        if (ticketed && result instanceof AcquireResult.Granted) {
            removeTicketOfGrantee(c, name, owner);
        }
        return result;
    }

    /**
     * Removes the ticket of a waiter that was just granted the lock, in a statement of its own. The grant stands if
     * this fails (the connection broke, say): the ticket then ends like a dead waiter's, a place's time to live after
     * its last heartbeat, and until then it keeps the lock for its owner after the release.
     */
    private void removeTicketOfGrantee(Connection c, String name, String owner) {
        try {
            withdraw(c, name, owner);
        } catch (SQLException e) {
            LOG.warn("granted '{}' to {}, but could not remove its ticket from the line ({}); it expires within a"
                    + " second", name, owner, e.getMessage());
        }
    }

    /**
     * The {@code UPDATE} that takes an existing free row; if it takes nothing, the insert of a missing row;
     * if the row is there after all, its report (see the class comment).
     */
    private AcquireResult acquireMariaDb(Connection c, String name, String owner, long leaseMillis,
                                         boolean ticketed) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ticketed ? takeSql : takeSqlNotInLine,
                Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, owner);
            ps.setLong(2, leaseMillis * 1000);
            ps.setString(3, name);
            ps.setString(4, owner);
            if (ticketed) {
                ps.setString(5, owner); // the second of nobodyAhead(true)
            }
            if (ps.executeUpdate() > 0) {
                return new AcquireResult.Granted(takenToken(c, ps));
            }
        }
        try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, leaseMillis * 1000);
            ps.setString(4, name);
            bindAhead(ps, 5, name, owner);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return new AcquireResult.Granted(rs.getLong(1));
                }
            }
        } catch (SQLException e) {
            if (e.getErrorCode() != DUPLICATE_KEY) {
                throw e;
            }
            // another client inserted the row first: report it
        }
        AcquireResult.Busy row = report(c, name);
        // (no row: purged in between, the caller tries again; a free one is kept for a waiter ahead in line)
        return row != null ? row : new AcquireResult.Busy(null, -1, null);
    }

    /**
     * The token {@link #takeSql} drew: the OK packet's last insert id, which MariaDB Connector/J gives as the
     * generated key; a driver that gives none for an {@code UPDATE} is asked for the session's
     * {@code LAST_INSERT_ID()}.
     */
    private static long takenToken(Connection c, PreparedStatement ps) throws SQLException {
        try (ResultSet keys = ps.getGeneratedKeys()) {
            if (keys.next() && keys.getLong(1) > 0) {
                return keys.getLong(1);
            }
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Adds the grant to the MEMORY table of releases, if name, owner and token still match (no redo-log
     * flush); if that table is full, deletes its entries that free nothing any more and tries again, and if it is
     * still full, frees the row by the durable write.
     */
    @Override
    public boolean release(Connection c, LeaseKey key) throws SQLException {
        if (System.nanoTime() - fullUntil < 0) {
            return releaseDurably(c, key);
        }
        for (int attempt = 1; attempt <= 2; attempt++) {
            try {
                return markReleased(c, key);
            } catch (SQLException e) {
                if (e.getErrorCode() != TABLE_FULL) {
                    throw e;
                }
            }
            if (attempt == 1) {
                clearReleases(c);
            }
        }
        fullUntil = System.nanoTime() + FULL_NANOS;
        if (!warnedFull) {
            warnedFull = true;
            LOG.warn("{} is full of releases of leases that have not ended, so releases are durable writes (a flush"
                    + " each) until there is room: raise max_heap_table_size globally and recreate the table (ALTER"
                    + " TABLE {} ENGINE = MEMORY); see the shipped DDL", released, released);
        }
        return releaseDurably(c, key);
    }

    /**
     * One statement: copies the grant's token and {@code acquired_at} into the table of releases if the row still
     * has that grant. A second release of the same grant (a retry) finds its entry: true, as the first.
     */
    private boolean markReleased(Connection c, LeaseKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + released + " (token, acquired_at, released_at)"
                + " SELECT token, acquired_at, " + NOW + " FROM " + table
                + " WHERE name = ? AND owner = ? AND token = ?"
                + " ON DUPLICATE KEY UPDATE token = VALUES(token)")) {
            bindKey(ps, key);
            if (ps.executeUpdate() > 0) {
                return true;
            }
        }
        // nothing written: not this grant any more, or (a pool set to report affected rows, not found ones) its
        // entry was there already
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + table + " WHERE name = ? AND owner = ?"
                + " AND token = ? AND " + releasedSql(table))) {
            bindKey(ps, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /**
     * Deletes the entries of the table of releases that free nothing any more: no row has their grant with an
     * unexpired lease (it was taken again, or ended, or the row was purged). Never an entry that frees a lease still
     * unexpired. Returns how many it deleted.
     */
    private int clearReleases(Connection c) throws SQLException {
        // (the live grants materialised once, with a key: a NOT IN subquery ran once per entry, a scan each)
        try (PreparedStatement ps = c.prepareStatement("DELETE r FROM " + released + " r LEFT JOIN (SELECT token,"
                + " acquired_at FROM " + table + " WHERE expires_at > " + NOW + ") live ON live.token = r.token"
                + " AND live.acquired_at = r.acquired_at WHERE live.token IS NULL")) {
            return ps.executeUpdate();
        }
    }

    /** Also deletes the releases that free nothing any more. */
    @Override
    public int purge(Connection c, long olderThanMillis) throws SQLException {
        int purged = super.purge(c, olderThanMillis);
        clearReleases(c);
        return purged;
    }

    @Override
    public List<String> requiredObjects() {
        return List.of(table, tokenSource, table + "_rw", queue, released);
    }
}
