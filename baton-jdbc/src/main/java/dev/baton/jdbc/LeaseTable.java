package dev.baton.jdbc;

import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The lease-table SQL of one dialect. Every statement is parameterised; the table name is spliced in only
 * after {@link JdbcLocks.Builder#tableName} validated it as a plain lower-case identifier.
 *
 * <p>Invariant kept by every dialect: a row is held iff {@code owner IS NOT NULL AND expires_at > now}, and
 * a free row (released) has {@code expires_at <= now}, so "may be taken" is simply {@code expires_at <= now}
 * by the database clock.
 */
abstract class LeaseTable {
    /**
     * Keys per renewal statement in the dialects that list them as {@code OR} terms. SQLite refuses an
     * expression tree deeper than 1,000, which an {@code OR} of more than about 300 terms reaches. MariaDB
     * accepts 20,000 terms but plans them badly: a 10,000-key renewal took longer than a 3 s lease in the
     * benchmark (W3) and every lease was lost; 1,000 keys per statement stays fast. PostgreSQL passes arrays
     * and renews any number in one statement.
     */
    static int renewBatch(Dialect dialect) {
        return switch (dialect) {
            case POSTGRESQL -> Integer.MAX_VALUE;
            case MARIADB, MYSQL -> 1_000;
            case SQLITE -> 250;
        };
    }

    // ---- one name, one lock: the session strategy's marker rows ------------------------------------

    /**
     * The owner of a <em>marker row</em>. The session strategy holds its locks in the server's lock tables,
     * not in rows, so on its first use of a name a client claims the name in the lease table with a marker
     * row that never expires ({@link #sessionMarkerInsert}); the table's primary key then decides, once and
     * atomically, which strategy a name belongs to. The lease strategy can never take a marker (its upsert
     * takes only an expired row) and refuses a name it finds marked; the session strategy refuses a name
     * that has a lease row. A real owner is always {@code clientId#thread}, so it never equals this.
     */
    static final String SESSION_MARKER = "session-strategy";
    /**
     * A marker's {@code expires_at}. Finite, unlike PostgreSQL's {@code 'infinity'}, because the statements
     * that report a holder's remaining lease subtract {@code now()} from it, which {@code 'infinity'} refuses
     * ("cannot subtract infinite timestamps"); within MySQL's {@code DATETIME} range.
     */
    static final String MARKER_EXPIRES = "9999-12-31 00:00:00";

    /** Inserts a marker row for a name (parameters: name, {@link #SESSION_MARKER}) unless it has a row already. */
    static String sessionMarkerInsert(Dialect dialect, String table) {
        String columns = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 0, ";
        return switch (dialect) {
            case POSTGRESQL -> columns + "now(), '" + MARKER_EXPIRES + "+00') ON CONFLICT (name) DO NOTHING";
            case MARIADB, MYSQL -> columns + MySqlFamilyLeaseTable.NOW + ", '" + MARKER_EXPIRES + "')"
                    + " ON DUPLICATE KEY UPDATE name = name";
            case SQLITE -> throw new IllegalStateException("SQLite has no session strategy");
        };
    }

    /**
     * Returns {@code result}, unless the holder it reports is a session strategy's marker: then the name
     * belongs to the session strategy, it can never be taken as a lease, and waiting would never end.
     *
     * @throws StrategyConflictException naming the lock, the table and the other strategy
     */
    static AcquireResult refuseSessionMarker(AcquireResult result, String name, String table) {
        if (result instanceof AcquireResult.Busy busy && SESSION_MARKER.equals(busy.holder())) {
            throw new StrategyConflictException(name, table, Strategy.SESSION, "lock '" + name
                    + "' is used with the session strategy in table " + table
                    + " (its row there is the session strategy's marker); one name is one lock: use one strategy per"
                    + " name, or delete the marker row once no client uses the name with the session strategy");
        }
        return result;
    }

    /** The session strategy's refusal of a name that has a lease row ({@code owner}: the row's owner, or null). */
    static StrategyConflictException usedByLease(String name, String table, String owner) {
        return new StrategyConflictException(name, table, Strategy.LEASE, "lock '" + name
                + "' is used with the lease strategy in table " + table
                + (owner == null ? " (its lease row there is free now)" : " (its lease row there names " + owner + ")")
                + "; one name is one lock: use one strategy per name, or delete its lease row once no client uses the"
                + " name with the lease strategy (purgeExpired deletes it some time after its last lease ended)");
    }

    final String table;

    LeaseTable(String table) {
        this.table = table;
    }

    abstract Dialect dialect();

    abstract AcquireResult tryAcquire(Connection c, String name, String owner, long leaseMillis) throws SQLException;

    /**
     * A read-only look at the row: the holder if it is held now, else null. Attempts look first, so that a
     * waiter retrying a held lock costs a read, not a write and a commit (a losing upsert still locks the
     * row and commits).
     */
    abstract AcquireResult.Busy peek(Connection c, String name) throws SQLException;

    abstract boolean release(Connection c, LeaseKey key) throws SQLException;

    /** Renews up to {@link #renewBatch} keys; returns the renewed ones. */
    abstract Set<LeaseKey> renew(Connection c, List<LeaseKey> keys, long leaseMillis) throws SQLException;

    abstract List<LockInfo> inspect(Connection c) throws SQLException;

    abstract int purge(Connection c, long olderThanMillis) throws SQLException;

    /** Names of the objects (tables, sequences) the strategy needs, to check they exist. */
    abstract List<String> requiredObjects();

    /** A statement that fails if the named object is missing. */
    abstract String probe(String object);

    /** Runs the shipped DDL with the configured table name; idempotent. */
    void createIfMissing(Connection c) throws SQLException {
        boolean ac = c.getAutoCommit();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            for (String sql : ddl()) {
                st.execute(sql);
            }
        } finally {
            c.setAutoCommit(ac);
        }
    }

    /** The shipped DDL statements, with {@code baton_locks} replaced by the configured table name. */
    List<String> ddl() {
        return ddl(dialect().schemaResource(), table);
    }

    /** The statements of a shipped DDL resource, with {@code baton_locks} replaced by {@code table}. */
    static List<String> ddl(String resource, String table) {
        String text;
        try (InputStream in = LeaseTable.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new LockException("DDL resource " + resource + " is missing from the jar");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new LockException("cannot read " + resource, e);
        }
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : text.split("\n")) {
            String trimmed = line.strip();
            if (trimmed.startsWith("--") || trimmed.isEmpty()) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                String sql = current.toString().strip();
                statements.add(sql.substring(0, sql.length() - 1).replace("baton_locks", table));
                current.setLength(0);
            }
        }
        return statements;
    }

    /** Binds name, owner and token of each key, in order, from parameter {@code first}: see {@link #keyPredicate}. */
    static void bindKeys(PreparedStatement ps, int first, List<LeaseKey> keys) throws SQLException {
        int i = first;
        for (LeaseKey k : keys) {
            ps.setString(i++, k.name());
            ps.setString(i++, k.owner());
            ps.setLong(i++, k.token());
        }
    }

    /** {@code (name = ? AND owner = ? AND token = ?) OR …} for n keys. */
    static String keyPredicate(int n) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                sb.append(" OR ");
            }
            sb.append("(name = ? AND owner = ? AND token = ?)");
        }
        return sb.append(')').toString();
    }
}
