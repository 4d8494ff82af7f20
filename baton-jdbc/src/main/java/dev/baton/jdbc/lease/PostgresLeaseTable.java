package dev.baton.jdbc.lease;

import dev.baton.jdbc.internal.ReleaseNotice;
import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.PgDurableCommit;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * PostgreSQL: acquisition is one statement. The upsert takes a free or expired row (drawing a fresh token
 * from the sequence <em>after</em> the row lock is held, so a grant's token is greater than that of every
 * grant committed before it); when it takes nothing, the same statement returns the holder's row.
 * Release notifies {@code LISTEN}ers on the table's channel, in the same statement, naming the head of the lock's
 * line ({@link ReleaseNotice}), so that only the waiter whose turn it is wakes; with nobody in line it sends no
 * notice (a {@code NOTIFY} makes the commit queue for the server's notification lock and wakes every listening
 * session, which an uncontended release does not need). The release's commit does not wait for the WAL flush
 * ({@code synchronous_commit} off for its own transaction, as for a ticket): a release lost in a server crash
 * leaves the row held until its lease ends, as if its holder had died, which every waiter already allows for;
 * grants and renewals, whose loss could let two hold at once, are flushed, whatever the server's
 * {@code synchronous_commit} ({@code on} for their own transaction, {@link PgDurableCommit}). So an acquire and release
 * cost one durable commit, and a hand-over one.
 */
final class PostgresLeaseTable extends LeaseTable {
    private final String sequence;
    private final String channel;
    /** The grant of a caller that may have a ticket in line ({@link #acquireSql(boolean)}). */
    private final String acquireSql;
    /** The grant of a caller that is not in line: one check of the line, no ticket to delete. */
    private final String acquireSqlNotInLine;
    private final String releaseSql;
    private final String renewSql;

    PostgresLeaseTable(String table) {
        super(table);
        this.sequence = table + "_token_seq";
        this.channel = table + "_released";
        this.acquireSql = acquireSql(true);
        this.acquireSqlNotInLine = acquireSql(false);
        this.releaseSql = "WITH released AS ("
                + " UPDATE " + table + " AS t SET owner = NULL, expires_at = LEAST(t.expires_at, now())"
                + " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async"
                + " WHERE t.name = ? AND t.owner = ? AND t.token = ? RETURNING t.name)"
                + " " + ReleaseNotice.notifyTheHeadSql(queue, "released");
        this.renewSql = "UPDATE " + table + " AS t SET expires_at = now() + make_interval(secs => ?)"
                + " FROM unnest(?::text[], ?::text[], ?::bigint[]) AS r(name, owner, token), " + PgDurableCommit.FROM_ITEM
                // o: the row as the statement's snapshot shows it, before this update: the time it had left
                + ", " + table + " AS o"
                + " WHERE t.name = r.name AND t.owner = r.owner AND t.token = r.token AND t.expires_at > now()"
                + " AND o.name = t.name"
                + " RETURNING t.name, t.owner, t.token, " + remainingSql("o.expires_at");
    }

    @Override
    public String releaseChannel() {
        return channel;
    }

    /** Arrays: any number of keys in one statement. */
    @Override
    public int renewBatch() {
        return Integer.MAX_VALUE;
    }

    @Override
    public String sessionMarkerInsert() {
        return "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 0, now(), '"
                + MARKER_EXPIRES + "+00') ON CONFLICT (name) DO NOTHING";
    }

    @Override
    public Dialect dialect() {
        return Dialect.POSTGRESQL;
    }

    @Override
    String nowSql() {
        return "now()";
    }

    @Override
    String nowPlusLeaseSql() {
        return "now() + make_interval(secs => ?)";
    }

    @Override
    void bindLease(PreparedStatement ps, int index, long leaseMillis) throws SQLException {
        ps.setDouble(index, leaseMillis / 1000.0);
    }

    @Override
    String remainingSql(String column) {
        return "ceil(extract(epoch FROM (" + column + " - now())) * 1000)::bigint";
    }

    @Override
    Duration remaining(long value) {
        return Duration.ofMillis(value);
    }

    @Override
    Instant instant(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, OffsetDateTime.class).toInstant();
    }

    /**
     * {@code clock_timestamp()}: two tickets of one burst still differ. The ticket's commit does not wait for
     * the WAL flush ({@code synchronous_commit} off for this statement's transaction only): a ticket is the order
     * of the line, not a grant, and one lost in a server crash only makes its waiter ask without a place, so
     * taking a place costs no durable commit.
     */
    @Override
    String enqueueSql() {
        return "INSERT INTO " + queue + " (name, owner, enqueued_at, expires_at)"
                + " SELECT ?, ?, clock_timestamp(), now() + make_interval(secs => ?)"
                + " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async"
                + " ON CONFLICT (name, owner) DO UPDATE SET expires_at = excluded.expires_at";
    }

    /** Not flushed at commit, as a ticket: deleting dead tickets is housekeeping (one lost in a crash: done again). */
    @Override
    String deleteDeadTicketsSql() {
        return "DELETE FROM " + queue + " USING (SELECT set_config('synchronous_commit', 'off', true)) AS async"
                + " WHERE expires_at <= now() + make_interval(secs => ?)";
    }

    /**
     * One statement for all of a client's places, arrays as the renewal's, not flushed at commit (a refresh lost in
     * a server crash only lets a ticket expire: its waiter's next heartbeat finds it and refreshes it, or its next
     * attempt takes a new place; the line orders grants, it never makes one). With {@code turns}, the same
     * statement tells which of the places face a free lock with nobody ahead: the release's notice named the head of
     * the line, and if that waiter died, nobody else would look before its own poll.
     */
    @Override
    public Heartbeat refreshPlaces(Connection c, List<Ticket> tickets, long ttlMillis, boolean turns)
            throws SQLException {
        String[] names = new String[tickets.size()];
        String[] owners = new String[tickets.size()];
        for (int i = 0; i < tickets.size(); i++) {
            names[i] = tickets.get(i).name();
            owners[i] = tickets.get(i).owner();
        }
        Array a1 = c.createArrayOf("text", names);
        Array a2 = c.createArrayOf("text", owners);
        String turn = !turns ? "false" : "NOT EXISTS (SELECT 1 FROM " + table + " l WHERE l.name = f.name AND "
                + heldSql("l") + ") AND NOT EXISTS (SELECT 1 FROM " + queue + " o WHERE o.name = f.name"
                + " AND o.owner <> f.owner AND o.expires_at > now() AND (o.enqueued_at < f.enqueued_at"
                + " OR (o.enqueued_at = f.enqueued_at AND o.owner < f.owner)))";
        try (PreparedStatement ps = c.prepareStatement("WITH f AS (UPDATE " + queue + " AS q"
                + " SET expires_at = now() + make_interval(secs => ?)"
                + " FROM unnest(?::text[], ?::text[]) AS r(name, owner),"
                + " (SELECT set_config('synchronous_commit', 'off', true)) AS async"
                + " WHERE q.name = r.name AND q.owner = r.owner RETURNING q.name, q.owner, q.enqueued_at)"
                + " SELECT f.name, f.owner, " + turn + " FROM f")) {
            ps.setDouble(1, ttlMillis / 1000.0);
            ps.setArray(2, a1);
            ps.setArray(3, a2);
            Set<Ticket> refreshed = new HashSet<>();
            Set<Ticket> turnsNow = new HashSet<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Ticket t = new Ticket(rs.getString(1), rs.getString(2));
                    refreshed.add(t);
                    if (rs.getBoolean(3)) {
                        turnsNow.add(t);
                    }
                }
            }
            return new Heartbeat(refreshed, turnsNow);
        } finally {
            a1.free();
            a2.free();
        }
    }

    /**
     * The grant: an upsert whose row is proposed only if nobody else is ahead in line ({@code ticketed}: ahead of the
     * caller's own ticket, which the same statement deletes when it took the row; else any live ticket of another
     * owner), so a missing row (never used, or purged) obeys the line as an existing one does; the update then takes
     * the row only if it is free. The line is read once: both the proposal and the conflict's update run on the
     * statement's one snapshot, so a second check in the update's {@code WHERE} would find the same. Parameters:
     * name, owner, lease (s), the line's ({@link #bindAhead}); then, {@code ticketed}, name and owner of the ticket
     * to delete; then the name of the row to report.
     */
    private String acquireSql(boolean ticketed) {
        return "WITH granted AS ("
                + " INSERT INTO " + table + " AS t (name, owner, token, acquired_at, expires_at)"
                + " SELECT ?, ?, nextval('" + sequence + "'), now(), now() + make_interval(secs => ?)"
                + " FROM " + PgDurableCommit.FROM_ITEM
                + " WHERE NOT " + aheadSql(ticketed)
                + " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, token = nextval('" + sequence + "'),"
                + "  acquired_at = now(), expires_at = excluded.expires_at"
                + " WHERE t.expires_at <= now()"
                + " RETURNING t.token)"
                + (ticketed ? ", dequeued AS (DELETE FROM " + queue + " WHERE name = ? AND owner = ?"
                              + "  AND EXISTS (SELECT 1 FROM granted))" : "")
                + " SELECT true, NULL::text, token, 0::bigint FROM granted"
                + " UNION ALL"
                + " SELECT false, owner, token, ceil(extract(epoch FROM (expires_at - now())) * 1000)::bigint"
                + "  FROM " + table + " WHERE name = ? AND NOT EXISTS (SELECT 1 FROM granted)";
    }

    /**
     * One statement, one commit: the upsert takes the row only if it is free and the caller is first in line,
     * and the same statement deletes the caller's ticket when it did ({@code ticketed}; a caller not in line has
     * none to delete, and its line check is the simpler one).
     */
    @Override
    public AcquireResult tryAcquire(Connection c, String name, String owner, long leaseMillis, boolean ticketed)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ticketed ? acquireSql : acquireSqlNotInLine)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setDouble(3, leaseMillis / 1000.0);
            int next = bindAhead(ps, 4, name, owner, ticketed);
            if (ticketed) {
                ps.setString(next++, name); // the ticket to delete
                ps.setString(next++, owner);
            }
            ps.setString(next, name);
            ResultSet rs;
            try {
                rs = ps.executeQuery();
            } catch (SQLException e) {
                if ("40001".equals(e.getSQLState())) {
                    // a pool defaulting to REPEATABLE READ: a concurrent change to the row is a lost race, not
                    // an error; the core tries again
                    return new AcquireResult.Busy(null, -1, null);
                }
                throw e;
            }
            try (rs) {
                if (!rs.next()) {
                    // the row appeared after this statement's snapshot and is held: holder unknown this time
                    return new AcquireResult.Busy(null, -1, null);
                }
                if (rs.getBoolean(1)) {
                    return new AcquireResult.Granted(rs.getLong(3));
                }
                String holder = rs.getString(2);
                long remaining = Math.max(0, rs.getLong(4));
                return new AcquireResult.Busy(holder, rs.getLong(3), Duration.ofMillis(remaining));
            }
        }
    }

    @Override
    public AcquireResult.Busy peek(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT owner, token,"
                + " ceil(extract(epoch FROM (expires_at - now())) * 1000)::bigint FROM " + table
                + " WHERE name = ? AND " + heldSql(table))) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new AcquireResult.Busy(rs.getString(1), rs.getLong(2),
                        Duration.ofMillis(Math.max(0, rs.getLong(3)))) : null;
            }
        }
    }

    @Override
    public boolean release(Connection c, LeaseKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(releaseSql)) {
            ps.setString(1, key.name());
            ps.setString(2, key.owner());
            ps.setLong(3, key.token());
            ps.setString(4, channel);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    @Override
    public Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException {
        return renewReportingTimeLeft(c, keys, leaseMillis).keySet();
    }

    /** One statement: the renewal returns each renewed row's time left before it. */
    @Override
    public Map<LeaseKey, Duration> renewReportingTimeLeft(Connection c, List<LeaseKey> keys, long leaseMillis)
            throws SQLException {
        String[] names = new String[keys.size()];
        String[] owners = new String[keys.size()];
        Long[] tokens = new Long[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            names[i] = keys.get(i).name();
            owners[i] = keys.get(i).owner();
            tokens[i] = keys.get(i).token();
        }
        Array a1 = c.createArrayOf("text", names);
        Array a2 = c.createArrayOf("text", owners);
        Array a3 = c.createArrayOf("bigint", tokens);
        try (PreparedStatement ps = c.prepareStatement(renewSql)) {
            ps.setDouble(1, leaseMillis / 1000.0);
            ps.setArray(2, a1);
            ps.setArray(3, a2);
            ps.setArray(4, a3);
            Map<LeaseKey, Duration> renewed = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.put(new LeaseKey(rs.getString(1), rs.getString(2), rs.getLong(3)), remaining(rs.getLong(4)));
                }
            }
            return renewed;
        } finally {
            a1.free();
            a2.free();
            a3.free();
        }
    }

    @Override
    public List<LockInfo> inspect(Connection c) throws SQLException {
        List<LockInfo> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token, acquired_at, expires_at,"
                + " " + heldSql(table) + " FROM " + table + " ORDER BY name");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                boolean held = rs.getBoolean(6);
                out.add(new LockInfo(rs.getString(1), held ? rs.getString(2) : null, rs.getLong(3),
                        rs.getObject(4, OffsetDateTime.class).toInstant(),
                        rs.getObject(5, OffsetDateTime.class).toInstant(), held));
            }
        }
        return out;
    }

    @Override
    public int purge(Connection c, long olderThanMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table
                + " WHERE expires_at < now() - make_interval(secs => ?)")) {
            ps.setDouble(1, olderThanMillis / 1000.0);
            return ps.executeUpdate();
        }
    }

    @Override
    public List<String> requiredObjects() {
        return List.of(table, sequence, table + "_rw", queue);
    }

    @Override
    public String probe(String object) {
        return object.equals(sequence) ? "SELECT last_value FROM " + sequence : "SELECT 1 FROM " + object + " WHERE 1 = 0";
    }
}
