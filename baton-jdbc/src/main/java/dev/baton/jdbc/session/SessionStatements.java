package dev.baton.jdbc.session;

import dev.baton.jdbc.internal.SessionKeys;
import dev.baton.LockInfo;
import dev.baton.UnsupportedBackendException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.lease.LeaseTable;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * The session strategy's SQL in one dialect family, and what else it does differently there: the server-side
 * key of a name, setting up a dedicated session, taking and releasing a lock, cancelling another session's
 * wait ({@code pg_cancel_backend} or {@code KILL QUERY}), asking whether a session holds a key, listing, and
 * whether read-write locks exist (PostgreSQL's shared advisory locks). Implementations:
 * {@link PostgresSessionStatements}, {@link MySqlSessionStatements} (MariaDB, MySQL). Chosen once, at
 * {@code build()}, by {@link #of}.
 */
public abstract class SessionStatements {
    final String table;
    final String description;
    final SessionKeys keys;
    /** The lease table's marker insert, by which the session strategy claims a name (one name, one lock). */
    final String markerInsert;

    SessionStatements(Dialect dialect, String table) {
        this.table = table;
        this.description = "jdbc-session/" + dialect.id() + " (table " + table + ")";
        this.keys = new SessionKeys(table);
        this.markerInsert = LeaseTable.of(dialect, table).sessionMarkerInsert();
    }

    /**
     * The statement set of a dialect: the one place the session strategy looks at it.
     *
     * @throws UnsupportedBackendException on SQLite, which has no session locks
     */
    public static SessionStatements of(Dialect dialect, String table) {
        return switch (dialect) {
            case POSTGRESQL -> new PostgresSessionStatements(table);
            case MARIADB -> new MySqlSessionStatements(dialect, table, true);
            case MYSQL -> new MySqlSessionStatements(dialect, table, false);
            case SQLITE -> throw new UnsupportedBackendException("the session strategy needs PostgreSQL, MariaDB or"
                    + " MySQL; SQLite has no session locks (use Strategy.LEASE)");
        };
    }

    /** The server-side key of a plain lock's name, as text. */
    abstract String serverKey(String name);

    /** Whether the dialect has read-write session locks (then {@link #rwKey}, {@link #attemptRw}, {@link #releaseRw}). */
    boolean readWrite() {
        return false;
    }

    /** The server-side key of a read-write lock's name. */
    long rwKey(String name) {
        throw new UnsupportedOperationException(description + " has no read-write session locks");
    }

    /** A query returning the server session's id. */
    abstract String serverIdQuery();

    /**
     * On a connection just borrowed, before any lock: evidence that a pooler, not the server, answered its login
     * (such a pooler may lend each statement a different server session), or null. By default null: the dialect
     * has no such evidence, and only the check that the session does not move applies.
     */
    String poolerEvidence(Connection c) throws SQLException {
        return null;
    }

    /** Sets up a freshly borrowed dedicated connection (auto-commit on). By default nothing. */
    void configure(Connection c, String clientId, SessionLockBackend.SessionOptions options) throws SQLException {
    }

    /**
     * Whether an error on a connection just opened shows the driver's named statements meeting another client's
     * on one server session (only a pooler sharing server sessions does that). By default never.
     */
    boolean isStatementClash(SQLException e) {
        return false;
    }

    /** Records a name under its key in {@code <table>_names}, unless it is there. */
    abstract void insertName(Connection c, String key, String name) throws SQLException;

    /** One attempt at a plain lock ({@code mode} exclusive) on the session; {@code wait} null: do not wait. */
    abstract AcquireResult attempt(SessionContext s, Connection c, String key, LockMode mode, Duration wait)
            throws SQLException;

    /** One attempt at a read-write lock's key, shared ({@code READ}) or exclusive ({@code WRITE}). */
    AcquireResult attemptRw(SessionContext s, Connection c, long k, LockMode mode, Duration wait)
            throws SQLException {
        throw new UnsupportedOperationException(description + " has no read-write session locks");
    }

    /** Releases a plain lock held by this session; whether it held it. */
    abstract boolean release(Connection c, String key) throws SQLException;

    /** Releases a read-write lock's key held by this session in {@code mode}; whether it held it. */
    boolean releaseRw(Connection c, long k, LockMode mode) throws SQLException {
        throw new UnsupportedOperationException(description + " has no read-write session locks");
    }

    /** The statement, run on another session, that cancels the wait in flight on server session {@code target}. */
    abstract String cancelWait(long target);

    /** What the server says, in one round trip: the asking session's id, and whether the grant is held. */
    record Answer(long serverId, boolean held) {
    }

    /** Whether server session {@code holderId} holds the grant of {@code lease} (in its mode). */
    abstract Answer confirm(Connection c, LeaseKey lease, long holderId) throws SQLException;

    /** The session locks of this table held now, by any client, with their names. */
    abstract List<LockInfo> inspect(Connection c) throws SQLException;
}
