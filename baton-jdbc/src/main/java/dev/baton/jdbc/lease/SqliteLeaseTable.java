package dev.baton.jdbc.lease;

import dev.baton.jdbc.internal.TokenCounters;
import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.LeaseKeys;
import dev.baton.jdbc.internal.SqlClocks;
import dev.baton.jdbc.internal.SqliteWrites;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * SQLite: times are milliseconds since the epoch by SQLite's own clock (the host's). A grant is a write
 * transaction, which SQLite serialises: bump the counter row, upsert with that token where the row may be taken,
 * and read the row back if it could not (a waiter's later attempts look first, readers do not block the writer in
 * WAL mode, and write only if the row is free or expired).
 *
 * <p>SQLite's busy handler is not fair: a connection that writes in a tight loop can take the write lock
 * again and again while another sleeps between retries. Every write of the lease strategy (acquire, ticket,
 * withdrawal, release, renewal) therefore takes the write lock by {@link SqliteWrites}, retrying after a pause of
 * at most 1 ms instead of the busy handler's sleeps of up to 100 ms; and within one client, acquisitions,
 * releases and renewals take turns on a fair lock first, so a burst of acquisitions cannot starve the client's
 * own renewal. In WAL mode, releases and tickets are not flushed ({@link SqliteWrites#inWriteTransactionNotFlushed}):
 * grants and renewals are.
 */
final class SqliteLeaseTable extends LeaseTable {
    /** SQLite's clock in milliseconds since the epoch, as every SQLite statement of Baton reads it. */
    static final String NOW = SqlClocks.SQLITE_NOW;
    private final String counter;
    private final ReentrantLock writeTurn = new ReentrantLock(true);

    SqliteLeaseTable(String table) {
        super(table);
        this.counter = table + "_token";
    }

    /** OR terms; SQLite refuses an expression tree deeper than 1,000 (see {@link LeaseTable#renewBatch}). */
    @Override
    public int renewBatch() {
        return 250;
    }

    /** SQLite has no session strategy, hence no marker rows. */
    @Override
    public String sessionMarkerInsert() {
        throw new IllegalStateException("SQLite has no session strategy");
    }

    /** The counter row the DDL inserts, which every token draw updates. */
    @Override
    String readyRow() {
        return "(SELECT 1 FROM " + counter + " WHERE id = 1)";
    }

    @Override
    public Dialect dialect() {
        return Dialect.SQLITE;
    }

    @Override
    String nowSql() {
        return NOW;
    }

    @Override
    String nowPlusLeaseSql() {
        return NOW + " + ?";
    }

    @Override
    void bindLease(PreparedStatement ps, int index, long leaseMillis) throws SQLException {
        ps.setLong(index, leaseMillis);
    }

    @Override
    String remainingSql(String column) {
        return column + " - " + NOW;
    }

    @Override
    Duration remaining(long value) {
        return Duration.ofMillis(value);
    }

    @Override
    Instant instant(ResultSet rs, int column) throws SQLException {
        return Instant.ofEpochMilli(rs.getLong(column));
    }

    @Override
    String enqueueSql() {
        return "INSERT INTO " + queue + " (name, owner, enqueued_at, expires_at) VALUES (?, ?, " + NOW + ", "
                + nowPlusLeaseSql() + ") ON CONFLICT (name, owner) DO UPDATE SET expires_at = excluded.expires_at";
    }

    @Override
    public AcquireResult tryAcquire(Connection c, String name, String owner, long leaseMillis, boolean ticketed)
            throws SQLException {
        writeTurn.lock();
        try {
            return acquireWriting(c, name, owner, leaseMillis, ticketed);
        } finally {
            writeTurn.unlock();
        }
    }

    /**
     * The grant's write transaction: the token drawn, then an upsert whose row is proposed only if nobody else is
     * ahead in line ({@code ticketed}: ahead of the caller's own ticket, deleted in the same commit when the row was
     * taken; else any live ticket of another owner, and no ticket to delete), so a missing row obeys the line as an
     * existing one does; the update takes the row only if it is free. The line is read once: the transaction is
     * the only writer, so a second check in the update's {@code WHERE} would find the same.
     */
    private AcquireResult acquireWriting(Connection c, String name, String owner, long leaseMillis, boolean ticketed)
            throws SQLException {
        return SqliteWrites.inWriteTransaction(c, tx -> {
            try (Statement bump = c.createStatement()) {
                TokenCounters.bump(bump, counter, "UPDATE " + counter + " SET value = value + 1 WHERE id = 1");
            }
            long token;
            try (PreparedStatement read = c.prepareStatement("SELECT value FROM " + counter + " WHERE id = 1");
                 ResultSet rs = read.executeQuery()) {
                rs.next();
                token = rs.getLong(1);
            }
            int changed;
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                    + " (name, owner, token, acquired_at, expires_at) SELECT ?, ?, ?, " + NOW + ", " + NOW + " + ?"
                    + " WHERE NOT " + aheadSql(ticketed)
                    + " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, token = excluded.token,"
                    + " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at"
                    + " WHERE expires_at <= " + NOW)) {
                ps.setString(1, name);
                ps.setString(2, owner);
                ps.setLong(3, token);
                ps.setLong(4, leaseMillis);
                bindAhead(ps, 5, name, owner, ticketed);
                changed = ps.executeUpdate();
            }
            if (changed > 0) {
                if (ticketed) {
                    super.withdraw(c, name, owner); // the caller's ticket, in the same commit
                }
                return new AcquireResult.Granted(token);
            }
            AcquireResult.Busy busy = readHolder(c, name);
            return busy != null ? busy : new AcquireResult.Busy(null, -1, null);
        });
    }

    /**
     * Takes or refreshes a place in line in a write transaction of its own ({@link SqliteWrites}), not flushed: a
     * ticket is the order of the line, not a grant.
     */
    @Override
    public void enqueue(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        SqliteWrites.inWriteTransactionNotFlushed(c, tx -> {
            super.enqueue(c, name, owner, leaseMillis);
            return null;
        });
    }

    /** The heartbeat of the client's places, in a write transaction of its own ({@link SqliteWrites}), not flushed. */
    @Override
    public Heartbeat refreshPlaces(Connection c, List<Ticket> tickets, long ttlMillis, boolean turns)
            throws SQLException {
        return SqliteWrites.inWriteTransactionNotFlushed(c, tx -> super.refreshPlaces(c, tickets, ttlMillis, turns));
    }

    /** In a write transaction of its own ({@link SqliteWrites}), not flushed. */
    @Override
    public int deleteDeadTickets(Connection c, long graceMillis) throws SQLException {
        return SqliteWrites.inWriteTransactionNotFlushed(c, tx -> super.deleteDeadTickets(c, graceMillis));
    }

    /** Leaves the line in a write transaction of its own ({@link SqliteWrites}), not flushed. */
    @Override
    public void withdraw(Connection c, String name, String owner) throws SQLException {
        SqliteWrites.inWriteTransactionNotFlushed(c, tx -> {
            super.withdraw(c, name, owner);
            return null;
        });
    }

    @Override
    public AcquireResult.Busy peek(Connection c, String name) throws SQLException {
        return readHolder(c, name);
    }

    /** The holder if the row is held now, else null. */
    private AcquireResult.Busy readHolder(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT owner, token, expires_at - " + NOW + " FROM " + table
                + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                long remaining = rs.getLong(3);
                String holder = rs.getString(1);
                if (holder == null || remaining <= 0) {
                    return null;
                }
                return new AcquireResult.Busy(holder, rs.getLong(2), Duration.ofMillis(remaining));
            }
        }
    }

    @Override
    public boolean release(Connection c, LeaseKey key) throws SQLException {
        writeTurn.lock();
        try {
            // not flushed: a release lost in a power failure leaves the row held until its lease ends
            return SqliteWrites.inWriteTransactionNotFlushed(c, tx -> {
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET owner = NULL,"
                        + " expires_at = MIN(expires_at, " + NOW + ") WHERE name = ? AND owner = ? AND token = ?")) {
                    ps.setString(1, key.name());
                    ps.setString(2, key.owner());
                    ps.setLong(3, key.token());
                    return ps.executeUpdate() > 0;
                }
            });
        } finally {
            writeTurn.unlock();
        }
    }

    @Override
    public Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException {
        writeTurn.lock();
        try {
            return renewWriting(c, keys, leaseMillis);
        } finally {
            writeTurn.unlock();
        }
    }

    private Set<LeaseKey> renewWriting(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException {
        String predicate = LeaseKeys.predicate(keys.size());
        return SqliteWrites.inWriteTransaction(c, tx -> {
            int updated;
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET expires_at = " + NOW
                    + " + ? WHERE expires_at > " + NOW + " AND " + predicate)) {
                ps.setLong(1, leaseMillis);
                LeaseKeys.bind(ps, 2, keys);
                updated = ps.executeUpdate();
            }
            Set<LeaseKey> renewed = new HashSet<>();
            if (updated == keys.size()) {
                renewed.addAll(keys);
            } else {
                try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token FROM " + table
                        + " WHERE expires_at > " + NOW + " AND " + predicate)) {
                    LeaseKeys.bind(ps, 1, keys);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            renewed.add(new LeaseKey(rs.getString(1), rs.getString(2), rs.getLong(3)));
                        }
                    }
                }
            }
            return renewed;
        });
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
                        Instant.ofEpochMilli(rs.getLong(4)), Instant.ofEpochMilli(rs.getLong(5)), held));
            }
        }
        return out;
    }

    @Override
    public int purge(Connection c, long olderThanMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE expires_at < " + NOW + " - ?")) {
            ps.setLong(1, olderThanMillis);
            return ps.executeUpdate();
        }
    }

    @Override
    public List<String> requiredObjects() {
        return List.of(table, counter, table + "_rw", queue);
    }

    @Override
    public String probe(String object) {
        return "SELECT 1 FROM " + object + " WHERE 1 = 0";
    }
}
