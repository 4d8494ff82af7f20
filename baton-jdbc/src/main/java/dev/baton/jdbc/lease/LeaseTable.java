package dev.baton.jdbc.lease;

import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.Strategy;
import dev.baton.jdbc.StrategyConflictException;
import dev.baton.jdbc.internal.Ddl;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;

/**
 * The lease-table SQL of one dialect. Every statement is parameterised; the table name is spliced in only
 * after {@link dev.baton.jdbc.JdbcLocks.Builder#tableName} validated it as a plain lower-case identifier.
 *
 * <p>Invariant kept by every dialect: a row is held iff {@code owner IS NOT NULL AND expires_at > now}, and
 * a free row (released) has {@code expires_at <= now}, so "may be taken" is simply {@code expires_at <= now}
 * by the database clock.
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
     * atomically, which strategy a name belongs to. The lease strategy can never take a marker (its upsert
     * takes only an expired row) and refuses a name it finds marked; the session strategy refuses a name
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
            case MARIADB -> new MySqlFamilyLeaseTable(table, true);
            case MYSQL -> new MySqlFamilyLeaseTable(table, false);
            case SQLITE -> new SqliteLeaseTable(table);
        };
    }

    final String table;

    LeaseTable(String table) {
        this.table = table;
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

    /** One-step acquisition: takes the row if free or expired, with a fresh token; else reports the holder. */
    public abstract AcquireResult tryAcquire(Connection c, String name, String owner, long leaseMillis) throws SQLException;

    /**
     * A read-only look at the row: the holder if it is held now, else null. Attempts look first, so that a
     * waiter retrying a held lock costs a read, not a write and a commit (a losing upsert still locks the
     * row and commits).
     */
    public abstract AcquireResult.Busy peek(Connection c, String name) throws SQLException;

    public abstract boolean release(Connection c, LeaseKey key) throws SQLException;

    /** Renews up to {@link #renewBatch} keys; returns the renewed ones. */
    public abstract Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException;

    public abstract List<LockInfo> inspect(Connection c) throws SQLException;

    public abstract int purge(Connection c, long olderThanMillis) throws SQLException;

    /** Names of the objects (tables, sequences) the strategy needs, to check they exist. */
    public abstract List<String> requiredObjects();

    /** A statement that fails if the named object is missing. */
    public abstract String probe(String object);

    /** Runs the shipped DDL with the configured table name; idempotent (PostgreSQL: serialised). */
    public void createIfMissing(Connection c) throws SQLException {
        DialectTraits.of(dialect()).executeDdl(c, ddl());
    }

    /** The shipped DDL statements, with {@code baton_locks} replaced by the configured table name. */
    public List<String> ddl() {
        return Ddl.statements(dialect().schemaResource(), table);
    }
}
