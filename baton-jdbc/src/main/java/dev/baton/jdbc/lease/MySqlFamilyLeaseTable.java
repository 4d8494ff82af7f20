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
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * MariaDB and MySQL 8. Times are {@code UTC_TIMESTAMP(6)}, immune to session time zones.
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
 * <p>MySQL: no sequences and no {@code RETURNING}, so one transaction: bump a counter row
 * ({@code LAST_INSERT_ID(value + 1)}, holding the counter's row lock to commit), upsert with that token, read the
 * row back. The upsert's conditional assignments rely on MySQL evaluating them left to right, each seeing the
 * columns already assigned: the first decides (the row expired and nobody else ahead in line) and stamps
 * {@code acquired_at} with the statement's now; the others follow that stamp, and {@code expires_at}, which they
 * test, is assigned last. (A stamp equal to the statement's now on an expired row is this statement's: an earlier
 * grant in the same microsecond would still be unexpired, unless also released within it, which could at worst
 * let this grant past the line to a free row, never past a holder. The grant's result is read the same way.)
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
    /** MySQL: the upsert of the grant's transaction; null for MariaDB. */
    private final String acquireSql;
    /** MariaDB: the insert of a row not there yet, which returns the token only if it inserted the row. */
    private final String insertSql;
    /** The read of a lease row as {@link #report} gives it (a grant that could not take it, {@link #peek}). */
    private final String reportSql;
    /**
     * MariaDB: the grant of an existing free row, by an {@code UPDATE} that hands back the token, for a caller that
     * may have a place in line ({@code takeSql}) and for one that has none ({@code takeSqlNotInLine}); null for MySQL.
     */
    private final String takeSql;
    private final String takeSqlNotInLine;
    /** MariaDB: the MEMORY table of releases ({@code <table>_released}); null for MySQL, whose releases are writes. */
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

    MySqlFamilyLeaseTable(String table, boolean mariadb) {
        super(table);
        this.mariadb = mariadb;
        this.tokenSource = mariadb ? table + "_token_seq" : table + "_token";
        this.released = mariadb ? table + "_released" : null;
        this.acquireSql = mariadb ? null : mySqlAcquireSql();
        // (not INSERT IGNORE: it would also turn a bad value into a warning and a wrong row; a row there already
        // makes this insert nothing, and draws no token)
        this.insertSql = mariadb ? "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                + " SELECT ?, ?, NEXTVAL(" + tokenSource + "), " + NOW + ", " + NOW + " + INTERVAL ? MICROSECOND"
                + " FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM " + table + " WHERE name = ?)"
                // a missing row (never used, or purged) is inserted only if nobody else is ahead in line either
                + " AND NOT EXISTS (SELECT 1 FROM " + queue + " o WHERE " + aheadCondition("?", true) + ")"
                + " RETURNING token" : null;
        this.reportSql = "SELECT owner, token, TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at), " + heldSql(table)
                + " FROM " + table + " WHERE name = ?";
        this.takeSql = mariadb ? mariaDbTakeSql(nobodyAhead(true)) : null;
        this.takeSqlNotInLine = mariadb ? mariaDbTakeSql(nobodyAhead(false)) : null;
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

    /**
     * The line's condition for a grant: nobody else ahead of the caller. {@code mayHaveTicket}: ahead of the caller's
     * own ticket (parameters: owner, owner); else any live ticket of another owner is ahead of it (parameter: owner):
     * one subquery, not two, about 0.04 ms less of MariaDB's planning per statement here.
     */
    private String nobodyAhead(boolean mayHaveTicket) {
        // the line's condition names the row's own name and the caller (MySQL refuses VALUES() inside a subquery)
        return "NOT EXISTS (SELECT 1 FROM " + queue + " o WHERE " + aheadCondition(table + ".name", mayHaveTicket)
                + ")";
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

    /** MariaDB: the entry {@code r} of the grant now in lease row {@code row}, as a {@code FROM … WHERE}. */
    private String entryOf(String row) {
        return " FROM " + released + " r WHERE r.token = " + row + ".token AND r.acquired_at = " + row + ".acquired_at";
    }

    /** MariaDB: whether the grant now in lease row {@code row} was released (has an entry in the MEMORY table). */
    private String releasedSql(String row) {
        return "EXISTS (SELECT 1" + entryOf(row) + ")";
    }

    /**
     * When the grant in lease row {@code row} ended or ends: its {@code expires_at}, or on MariaDB, if released
     * earlier, when its entry says.
     */
    private String endSql(String row) {
        return !mariadb ? row + ".expires_at" : "LEAST(" + row + ".expires_at, COALESCE((SELECT r.released_at"
                + entryOf(row) + "), " + row + ".expires_at))";
    }

    /** Held: a holder, an unexpired lease and, on MariaDB, no release of its grant in the MEMORY table. */
    @Override
    String heldSql(String row) {
        return !mariadb ? super.heldSql(row) : super.heldSql(row) + " AND NOT " + releasedSql(row);
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
    Instant instant(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
    }

    @Override
    String enqueueSql() {
        return "INSERT INTO " + queue + " (name, owner, enqueued_at, expires_at) VALUES (?, ?, " + NOW + ", "
                + nowPlusLeaseSql() + ") ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at)";
    }

    /** MySQL/MariaDB "Duplicate entry for key" (ER_DUP_ENTRY). */
    private static final int DUPLICATE_KEY = 1062;
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
            if (!mariadb) {
                return acquireMySql(c, name, owner, leaseMillis);
            }
            // each statement of the grant is auto-committed: its row and next-key locks end with it. (In one
            // transaction with the removal of the caller's ticket, a grantee cut off between the two kept them, and
            // every other client's new ticket for the lock waited on them: JdbcLeaseTableIT.aGranteeStalled…)
            AcquireResult result = acquireMariaDb(c, name, owner, leaseMillis, ticketed);
            if (ticketed && result instanceof AcquireResult.Granted) {
                removeTicketOfGrantee(c, name, owner);
            }
            return result;
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
     * MariaDB: the {@code UPDATE} that takes an existing free row; if it takes nothing, the insert of a missing row;
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
     * The lease row of {@code name}: null if there is none; held, its holder, token and remaining lease; free
     * (expired, or on MariaDB its grant released), its token with no holder and no remaining lease.
     */
    private AcquireResult.Busy report(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(reportSql)) {
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

    private static AcquireResult.Busy busy(String holder, long token, long remainingMicros) {
        // (not nanos * 1000: a marker row's remaining microseconds would overflow a long of nanoseconds)
        return new AcquireResult.Busy(holder, token, Duration.of(Math.max(0, remainingMicros), ChronoUnit.MICROS));
    }

    @Override
    public AcquireResult.Busy peek(Connection c, String name) throws SQLException {
        AcquireResult.Busy row = report(c, name);
        return row == null || row.holder() == null ? null : row; // a held row always names its holder
    }

    /**
     * MariaDB: adds the grant to the MEMORY table of releases, if name, owner and token still match (no redo-log
     * flush); if that table is full, deletes its entries that free nothing any more and tries again, and if it is
     * still full, frees the row by the durable write. MySQL: the durable write.
     */
    @Override
    public boolean release(Connection c, LeaseKey key) throws SQLException {
        if (!mariadb || System.nanoTime() - fullUntil < 0) {
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

    private static void bindKey(PreparedStatement ps, LeaseKey key) throws SQLException {
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
    private boolean releaseDurably(Connection c, LeaseKey key) throws SQLException {
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
     * and, on MariaDB, the releases that free nothing any more.
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
        if (mariadb) {
            clearReleases(c);
        }
        return purged;
    }

    @Override
    public List<String> requiredObjects() {
        return !mariadb ? List.of(table, tokenSource, table + "_rw", queue)
                : List.of(table, tokenSource, table + "_rw", queue, released);
    }

    @Override
    public String probe(String object) {
        return "SELECT 1 FROM " + object + " WHERE 1 = 0";
    }
}
