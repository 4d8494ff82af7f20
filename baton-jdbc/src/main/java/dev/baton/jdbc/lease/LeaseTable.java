package dev.baton.jdbc.lease;

import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.Strategy;
import dev.baton.jdbc.StrategyConflictException;
import dev.baton.jdbc.internal.Ddl;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.internal.LeaseKeys;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The lease-table SQL of one dialect. Every statement is parameterised; the table name is spliced in only
 * after {@link dev.baton.jdbc.JdbcLocks.Builder#tableName} validated it as a plain lower-case identifier.
 *
 * <p>Invariant kept by every dialect: a row is held iff {@code owner IS NOT NULL AND expires_at > now} by the
 * database clock ({@link #heldSql}), and a free row (released) has {@code expires_at <= now}, so "may be taken" is
 * simply {@code expires_at <= now}. MariaDB adds one term: a release is an entry in a MEMORY table, not a write of
 * the row, and a row whose grant has such an entry is free too ({@link MySqlFamilyLeaseTable}).
 */
public abstract class LeaseTable {
    /**
     * Keys per renewal statement in the dialects that list them as {@code OR} terms. SQLite refuses an
     * expression tree deeper than 1,000, which an {@code OR} of more than about 300 terms reaches. MariaDB
     * accepts 20,000 terms but plans them badly: a 10,000-key renewal took longer than a 3 s lease in the
     * benchmark (W3) and every lease was lost; 1,000 keys per statement stays fast. PostgreSQL passes arrays
     * and renews any number in one statement.
     */
    public abstract int renewBatch();

    // ---- one name, one lock: the session strategy's marker rows ------------------------------------

    /**
     * The owner of a <em>marker row</em>. The session strategy holds its locks in the server's lock tables,
     * not in rows, so on its first use of a name a client claims the name in the lease table with a marker
     * row that never expires ({@link #sessionMarkerInsert}); the table's primary key then decides, once and
     * atomically, which strategy a name belongs to. The lease strategy can never take a marker (its grant
     * takes only a free row: expired, or on MariaDB released, and no release names a marker) and refuses a name it
     * finds marked; the session strategy refuses a name
     * that has a lease row. A real owner is always {@code clientId#thread}, so it never equals this.
     */
    public static final String SESSION_MARKER = "session-strategy";
    /**
     * A marker's {@code expires_at}. Finite, unlike PostgreSQL's {@code 'infinity'}, because the statements
     * that report a holder's remaining lease subtract {@code now()} from it, which {@code 'infinity'} refuses
     * ("cannot subtract infinite timestamps"); within MySQL's {@code DATETIME} range.
     */
    static final String MARKER_EXPIRES = "9999-12-31 00:00:00";

    /**
     * Inserts a marker row for a name (parameters: name, {@link #SESSION_MARKER}) unless it has a row already.
     *
     * @throws IllegalStateException on SQLite, which has no session strategy
     */
    public abstract String sessionMarkerInsert();

    /**
     * Returns {@code result}, unless the holder it reports is a session strategy's marker: then the name
     * belongs to the session strategy, it can never be taken as a lease, and waiting would never end.
     *
     * @throws StrategyConflictException naming the lock, the table and the other strategy
     */
    public static AcquireResult refuseSessionMarker(AcquireResult result, String name, String table) {
        if (result instanceof AcquireResult.Busy busy && SESSION_MARKER.equals(busy.holder())) {
            throw new StrategyConflictException(name, table, Strategy.SESSION, "lock '" + name
                    + "' is used with the session strategy in table " + table
                    + " (its row there is the session strategy's marker); one name is one lock: use one strategy per"
                    + " name, or delete the marker row once no client uses the name with the session strategy");
        }
        return result;
    }

    /** The session strategy's refusal of a name that has a lease row ({@code owner}: the row's owner, or null). */
    public static StrategyConflictException usedByLease(String name, String table, String owner) {
        return new StrategyConflictException(name, table, Strategy.LEASE, "lock '" + name
                + "' is used with the lease strategy in table " + table
                + (owner == null ? " (its lease row there is free now)" : " (its lease row there names " + owner + ")")
                + "; one name is one lock: use one strategy per name, or delete its lease row once no client uses the"
                + " name with the lease strategy (purgeExpired deletes it some time after its last lease ended)");
    }

    /**
     * The lease table of a dialect: the one place the lease strategy (and the strategies on its rows) picks
     * its SQL.
     */
    public static LeaseTable of(Dialect dialect, String table) {
        return switch (dialect) {
            case POSTGRESQL -> new PostgresLeaseTable(table);
            case MARIADB -> new MariaDbLeaseTable(table);
            case MYSQL -> new MySqlLeaseTable(table);
            case SQLITE -> new SqliteLeaseTable(table);
        };
    }

    final String table;
    /** The line of waiters: {@code <table>_queue}, one ticket per waiting owner of a plain lease. */
    final String queue;

    LeaseTable(String table) {
        this.table = table;
        this.queue = table + "_queue";
    }

    // ---- the line of waiters ------------------------------------------------------------------------

    /** The dialect's clock, as every statement of the dialect reads it. */
    abstract String nowSql();

    /** Now plus a lease, the lease bound as one parameter by {@link #bindLease}. */
    abstract String nowPlusLeaseSql();

    /** Binds a lease of {@code leaseMillis} for {@link #nowPlusLeaseSql()}. */
    abstract void bindLease(PreparedStatement ps, int index, long leaseMillis) throws SQLException;

    /** The time left until {@code column} by the database clock, in the unit {@link #remaining} reads. */
    abstract String remainingSql(String column);

    /** The time left, from the value of {@link #remainingSql}. */
    abstract Duration remaining(long value);

    /**
     * The condition that the lease row {@code row} (a table name or alias) is held now: by default a holder and an
     * unexpired lease, by the database clock.
     */
    String heldSql(String row) {
        return row + ".owner IS NOT NULL AND " + row + ".expires_at > " + nowSql();
    }

    /** Inserts a ticket (parameters: name, owner, lease), or refreshes its expiry and keeps its place. */
    abstract String enqueueSql();

    /**
     * True iff a live ticket of another owner is ahead in the line of a name: ahead of the caller's own ticket,
     * or any live ticket if the caller has none. Parameters: name, owner, owner. The caller may take a free lock
     * only when this is false: a free lock goes to the earliest live waiter, and a caller not in line (a
     * releasing thread asking again, a try-once) takes it only while nobody waits.
     */
    String aheadSql() {
        return aheadSql(true);
    }

    /**
     * As {@link #aheadSql()}; without {@code mayHaveTicket}, for a caller that is not in line (its first attempt, a
     * try-once): true iff any live ticket of another owner exists, which needs no look for the caller's own ticket.
     * Parameters: name, owner, and the owner once more with {@code mayHaveTicket} ({@link #bindAhead}).
     */
    String aheadSql(boolean mayHaveTicket) {
        return "EXISTS (SELECT 1 FROM " + queue + " o WHERE " + aheadCondition("?", mayHaveTicket) + ")";
    }

    /** The condition on a ticket {@code o} of {@link #aheadSql()} (the same three parameters). */
    private String aheadCondition() {
        return aheadCondition("?", true);
    }

    /**
     * The condition on a ticket {@code o} that it is live, of another owner, and ahead of the caller: the lock's
     * name is {@code name} (a parameter {@code ?}, or a column), then the caller's owner as a parameter; with
     * {@code mayHaveTicket}, ahead of the caller's own ticket if it has one (the owner once more as a parameter),
     * else any live ticket of another owner.
     */
    String aheadCondition(String name, boolean mayHaveTicket) {
        return "o.name = " + name + " AND o.owner <> ? AND o.expires_at > " + nowSql()
                + (mayHaveTicket ? " AND NOT EXISTS (SELECT 1 FROM " + queue + " m WHERE m.name = o.name"
                   + " AND m.owner = ? AND (m.enqueued_at < o.enqueued_at OR (m.enqueued_at = o.enqueued_at"
                   + " AND m.owner < o.owner)))" : "");
    }

    /** Binds the three parameters of {@link #aheadSql()} from {@code index}; returns the next index. */
    static int bindAhead(PreparedStatement ps, int index, String name, String owner) throws SQLException {
        return bindAhead(ps, index, name, owner, true);
    }

    /** Binds the parameters of {@link #aheadSql(boolean)} from {@code index}; returns the next index. */
    static int bindAhead(PreparedStatement ps, int index, String name, String owner, boolean mayHaveTicket)
            throws SQLException {
        ps.setString(index, name);
        ps.setString(index + 1, owner);
        if (!mayHaveTicket) {
            return index + 2;
        }
        ps.setString(index + 2, owner);
        return index + 3;
    }

    /**
     * What an attempt sees, in one read: the live holder (or null), how many live waiters of other owners are
     * ahead of {@code owner} in the line, and (where {@link #namesPredecessor()}) the owner of the live ticket
     * right ahead of the caller's, or null, and when that place was taken ({@link #placeSinceSql}).
     */
    public record Look(AcquireResult.Busy holder, int ahead, String predecessor, long predecessorSince) {
        public Look(AcquireResult.Busy holder, int ahead) {
            this(holder, ahead, null, 0);
        }
    }

    /**
     * Whether {@link #look(Connection, String, String, boolean)} can also name the waiter right ahead of the caller
     * (MariaDB, MySQL: the waiter behind it waits for that waiter's bell, {@link LineBells}).
     */
    boolean namesPredecessor() {
        return false;
    }

    /** Where {@link #namesPredecessor()}: a ticket's {@code enqueued_at} ({@code column}) as a whole number. */
    String placeSinceSql(String column) {
        throw new UnsupportedOperationException(dialect() + " names no predecessor");
    }

    /**
     * Takes a new place in the line, as {@link #enqueue} does, and returns when it was taken
     * ({@link #placeSinceSql}: the time that names its bell); where {@link #namesPredecessor()}.
     */
    public long enqueueTellingPlace(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        throw new UnsupportedOperationException(dialect() + " names no predecessor");
    }

    /** One read: the holder if the lock is held now, and how many others are ahead in the line. */
    public Look look(Connection c, String name, String owner) throws SQLException {
        return look(c, name, owner, false);
    }

    /**
     * As {@link #look(Connection, String, String)}; {@code predecessor}: also who is right ahead of the caller, and
     * since when (where {@link #namesPredecessor()}; for the bells, which only a MariaDB server rings).
     */
    public Look look(Connection c, String name, String owner, boolean predecessor) throws SQLException {
        if (predecessor && !namesPredecessor()) {
            throw new UnsupportedOperationException(dialect() + " names no predecessor");
        }
        // the predecessor: one read of the line for its owner and place, joined (a row of nulls if nobody is ahead)
        try (PreparedStatement ps = c.prepareStatement("SELECT l.owner, l.token, " + remainingSql("l.expires_at")
                + ", CASE WHEN " + heldSql("l") + " THEN 1 ELSE 0 END,"
                + " (SELECT COUNT(*) FROM " + queue + " o WHERE " + aheadCondition() + ")"
                + (predecessor ? ", p.owner, p.since" : "")
                + " FROM (SELECT 1 AS one) d LEFT JOIN " + table + " l ON l.name = ?"
                + (predecessor ? " LEFT JOIN (SELECT o.owner, " + placeSinceSql("o.enqueued_at") + " AS since FROM "
                   + queue + " o WHERE " + aheadCondition() + " ORDER BY o.enqueued_at DESC, o.owner DESC LIMIT 1) p"
                   + " ON 1 = 1" : ""))) {
            int next = bindAhead(ps, 1, name, owner);
            ps.setString(next++, name);
            if (predecessor) {
                bindAhead(ps, next, name, owner);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                AcquireResult.Busy holder = rs.getInt(4) == 1
                        ? new AcquireResult.Busy(rs.getString(1), rs.getLong(2), remaining(Math.max(0, rs.getLong(3))))
                        : null;
                return predecessor ? new Look(holder, rs.getInt(5), rs.getString(6), rs.getLong(7))
                        : new Look(holder, rs.getInt(5));
            }
        }
    }

    /**
     * Takes a place in the line of {@code name} for {@code owner}, or refreshes the place it has (its
     * {@code enqueued_at} stays): the ticket expires {@code leaseMillis} (the place's time to live, not the waiter's
     * lease) after this call unless its heartbeat ({@link #refreshPlaces}) refreshes it.
     */
    public void enqueue(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(enqueueSql())) {
            ps.setString(1, name);
            ps.setString(2, owner);
            bindLease(ps, 3, leaseMillis);
            ps.executeUpdate();
        }
    }

    /** Removes {@code owner}'s place in the line of {@code name}, if it has one. */
    public void withdraw(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + queue + " WHERE name = ? AND owner = ?")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.executeUpdate();
        }
    }

    /** A timestamp column of the dialect ({@code enqueued_at}, {@code expires_at}) as an instant. */
    abstract Instant instant(ResultSet rs, int column) throws SQLException;

    /** The columns of a place as {@link #place} reads them: owner, since, alive until, alive now. */
    private String placeColumns() {
        return "owner, enqueued_at, expires_at, CASE WHEN expires_at > " + nowSql() + " THEN 1 ELSE 0 END";
    }

    private LockInfo.Waiter place(ResultSet rs, int first) throws SQLException {
        return new LockInfo.Waiter(rs.getString(first), instant(rs, first + 1), instant(rs, first + 2),
                rs.getInt(first + 3) == 1);
    }

    /**
     * Every lock's line, in the line's order (the order {@link #aheadCondition} counts: {@code enqueued_at}, then
     * owner), dead places (expired, not yet deleted) included and marked as such; keyed by lock name.
     */
    public Map<String, List<LockInfo.Waiter>> lines(Connection c) throws SQLException {
        Map<String, List<LockInfo.Waiter>> lines = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, " + placeColumns() + " FROM " + queue
                + " ORDER BY name, enqueued_at, owner");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                lines.computeIfAbsent(readName(rs, 1), n -> new ArrayList<>()).add(place(rs, 2));
            }
        }
        return lines;
    }

    /**
     * An operator's removal of {@code owner}'s place in the line of {@code name}: reads the place, then deletes its
     * ticket. Returns the place as it was read, or empty if there was none (never taken, withdrawn, granted, or
     * deleted after it died).
     */
    public Optional<LockInfo.Waiter> removePlace(Connection c, String name, String owner) throws SQLException {
        LockInfo.Waiter place;
        try (PreparedStatement ps = c.prepareStatement("SELECT " + placeColumns() + " FROM " + queue
                + " WHERE name = ? AND owner = ?")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                place = place(rs, 1);
            }
        }
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + queue + " WHERE name = ? AND owner = ?")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            return ps.executeUpdate() == 1 ? Optional.of(place) : Optional.empty();
        }
    }

    /** Deletes the tickets that expired (their waiters died or left without withdrawing); returns how many. */
    public int purgeTickets(Connection c) throws SQLException {
        return deleteDeadTickets(c, 0);
    }

    /**
     * Deletes the tickets that expired more than {@code graceMillis} ago, of every lock: their waiters died, or left
     * without withdrawing (a live waiter whose heartbeat was late by less than the grace finds its ticket, and its
     * place, still there). Returns how many it deleted.
     */
    public int deleteDeadTickets(Connection c, long graceMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(deleteDeadTicketsSql())) {
            bindLease(ps, 1, -graceMillis);
            return ps.executeUpdate();
        }
    }

    /** The delete of {@link #deleteDeadTickets}: the now-minus-grace bound as {@link #nowPlusLeaseSql()}. */
    String deleteDeadTicketsSql() {
        return "DELETE FROM " + queue + " WHERE expires_at <= " + nowPlusLeaseSql();
    }

    /** Whether {@code e} says that the line's table is full (a MEMORY table at its size; MariaDB's shipped DDL). */
    public boolean isLineFull(SQLException e) {
        return false;
    }

    /** A waiter's place in the line of a lock: the lock's name and the waiter's owner. */
    public record Ticket(String name, String owner) {
    }

    /**
     * What a heartbeat found: the tickets it refreshed (the others are gone: withdrawn, granted, or deleted after
     * they expired) and, where asked, those refreshed whose turn it is: the lock is free (not held, or no row) and no
     * live ticket of another owner is ahead.
     */
    public record Heartbeat(Set<Ticket> refreshed, Set<Ticket> turns) {
    }

    /**
     * The heartbeat of a client's places in line: moves the expiry of each of {@code tickets} that still exists to
     * {@code ttlMillis} from now by the database clock, in as few statements as the dialect allows (an expired
     * ticket not yet deleted is refreshed too, and keeps its place); never creates a ticket. {@code turns}: also
     * tell which refreshed tickets face a free lock with nobody ahead (PostgreSQL, where waiters wait for a notice
     * that a dead head of the line would never act on).
     */
    public Heartbeat refreshPlaces(Connection c, List<Ticket> tickets, long ttlMillis, boolean turns)
            throws SQLException {
        Set<Ticket> refreshed = new java.util.HashSet<>();
        int batch = Math.max(1, Math.min(renewBatch(), 1_000));
        for (int i = 0; i < tickets.size(); i += batch) {
            List<Ticket> part = tickets.subList(i, Math.min(tickets.size(), i + batch));
            String predicate = String.join(" OR ", java.util.Collections.nCopies(part.size(),
                    "(name = ? AND owner = ?)"));
            int updated;
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + queue + " SET expires_at = "
                    + nowPlusLeaseSql() + " WHERE " + predicate)) {
                bindLease(ps, 1, ttlMillis);
                bindTickets(ps, 2, part);
                updated = ps.executeUpdate();
            }
            if (updated == part.size()) {
                refreshed.addAll(part);
                continue;
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT name, owner FROM " + queue + " WHERE " + predicate)) {
                bindTickets(ps, 1, part);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        refreshed.add(new Ticket(readName(rs, 1), rs.getString(2)));
                    }
                }
            }
        }
        return new Heartbeat(refreshed, Set.of());
    }

    private static void bindTickets(PreparedStatement ps, int index, List<Ticket> tickets) throws SQLException {
        for (Ticket t : tickets) {
            ps.setString(index++, t.name());
            ps.setString(index++, t.owner());
        }
    }

    /** A lock's name as a result set gives it (MySQL family: UTF-8 bytes). */
    String readName(ResultSet rs, int column) throws SQLException {
        return rs.getString(column);
    }

    /** The table's name. */
    public String table() {
        return table;
    }

    public abstract Dialect dialect();

    /**
     * The {@code NOTIFY} channel that releases are announced on (PostgreSQL), or null where the dialect has
     * none (waiters in other clients then poll).
     */
    public String releaseChannel() {
        return null;
    }

    /** As {@link #tryAcquire(Connection, String, String, long, boolean)} for a caller that has no place in line. */
    public AcquireResult tryAcquire(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        return tryAcquire(c, name, owner, leaseMillis, false);
    }

    /**
     * One-step acquisition: takes the row if it is free (expired, or on MariaDB released) <em>and</em> no live
     * waiter of another owner is ahead of {@code owner} in the line ({@link #aheadSql()}), with a fresh token, in one
     * durable commit that also removes the caller's ticket ({@code ticketed}: the caller may have one; MariaDB
     * removes it in a statement right after); else reports the holder (a free row that the line keeps for someone
     * else is reported with no remaining lease). A caller that is not {@code ticketed} (not in line: an uncontended
     * first attempt, a try-once) costs no look for its own ticket and no removal of one: the grant checks only that
     * no live ticket of another owner exists, once.
     */
    public abstract AcquireResult tryAcquire(Connection c, String name, String owner, long leaseMillis,
                                             boolean ticketed) throws SQLException;

    /**
     * A read-only look at the row: the holder if it is held now, else null (force release, confirmation; the
     * attempts of a waiter look with {@link #look}, so that retrying a held lock costs a read, not a write and a
     * commit: a losing grant still locks the row, and on some servers commits).
     */
    public abstract AcquireResult.Busy peek(Connection c, String name) throws SQLException;

    public abstract boolean release(Connection c, LeaseKey key) throws SQLException;

    /** A release of another client's lease ({@code baton release}): as {@link #release} unless the dialect says. */
    public boolean forceRelease(Connection c, LeaseKey key) throws SQLException {
        return release(c, key);
    }

    /** Renews up to {@link #renewBatch} keys; returns the renewed ones. */
    public abstract Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException;

    /**
     * As {@link #renew}, and returns each renewed key with the time its row had left just before, by the database
     * clock ({@link dev.baton.spi.ReportsTimeLeft}: a server clock that stepped forward shortens it). This default
     * reads the rows' time left in one {@code SELECT} on the same connection, then renews (MariaDB, MySQL and SQLite
     * cannot return a value from an {@code UPDATE}); PostgreSQL does both in its one renewal statement.
     */
    public Map<LeaseKey, Duration> renewReportingTimeLeft(Connection c, List<LeaseKey> keys, long leaseMillis)
            throws SQLException {
        Map<LeaseKey, Duration> before = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token, " + remainingSql("expires_at")
                + " FROM " + table + " WHERE " + LeaseKeys.predicate(keys.size()))) {
            LeaseKeys.bind(ps, 1, keys);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    before.put(new LeaseKey(nameAt(rs, 1), rs.getString(2), rs.getLong(3)), remaining(rs.getLong(4)));
                }
            }
        }
        Map<LeaseKey, Duration> renewed = new HashMap<>();
        for (LeaseKey k : renew(c, keys, leaseMillis)) {
            renewed.put(k, before.getOrDefault(k, Duration.ofMillis(leaseMillis)));
        }
        return renewed;
    }

    /** A lock name read from a result column (MySQL-family tables store it as bytes). */
    String nameAt(ResultSet rs, int column) throws SQLException {
        return rs.getString(column);
    }

    public abstract List<LockInfo> inspect(Connection c) throws SQLException;

    public abstract int purge(Connection c, long olderThanMillis) throws SQLException;

    /** Names of the objects (tables, sequences) the strategy needs, to check they exist. */
    public abstract List<String> requiredObjects();

    /** A statement that fails if the named object is missing. */
    public abstract String probe(String object);

    /**
     * Runs the shipped DDL with the configured table name unless everything it creates is there already
     * ({@link #isComplete}); idempotent (PostgreSQL: serialised). Reading first spares each start of a client
     * the DDL's statements (and on PostgreSQL their "already exists" notices, on SQLite a write transaction).
     */
    public void createIfMissing(Connection c) throws SQLException {
        if (!isComplete(c)) {
            DialectTraits.of(dialect()).executeDdl(c, ddl());
        }
    }

    /**
     * Whether every object the DDL creates exists, and the row it inserts where tokens come from a one-row counter:
     * one statement ({@link #completeProbe()}), run in auto-commit mode. Any failure counts as incomplete: the DDL
     * then creates what is missing, or fails saying why it cannot.
     */
    boolean isComplete(Connection c) {
        try (var st = c.createStatement(); ResultSet rs = st.executeQuery(completeProbe())) {
            return rs.next() && rs.getObject(1) != null;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * One query, one row: its first column is null if the DDL's inserted row is missing ({@link #readyRow()}), and
     * it fails if any of the {@link #requiredObjects()} is missing.
     */
    String completeProbe() {
        StringBuilder sql = new StringBuilder("SELECT ").append(readyRow());
        for (String object : requiredObjects()) {
            sql.append(", (SELECT 1 FROM ").append(object).append(" WHERE 1 = 0)");
        }
        return sql.toString();
    }

    /**
     * An expression that is null unless the row the DDL inserts exists: the counter row where tokens come from a
     * one-row table ({@code (SELECT 1 FROM counter WHERE id = 1)}); {@code 1} where the DDL inserts no row.
     */
    String readyRow() {
        return "1";
    }

    /** The shipped DDL statements, with {@code baton_locks} replaced by the configured table name. */
    public List<String> ddl() {
        return Ddl.statements(dialect().schemaResource(), table);
    }
}
