package dev.baton.jdbc;

import dev.baton.LockBackendException;
import dev.baton.LockNames;
import dev.baton.LockWaitTimeoutException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The transaction row-lock strategy behind {@link JdbcLockClient#inTransaction}: not re-entrant (a nested call
 * on another connection waits for itself until its bound), fair only as far as the database queues row-lock
 * waiters, held until the transaction that does the work commits or rolls back (or its connection dies).
 *
 * <p>Algorithm, on one connection borrowed for the whole call:
 * <ol>
 * <li>PostgreSQL: begin (READ COMMITTED), {@code set_config('lock_timeout', remaining, true)}, {@code SELECT … FOR
 *     UPDATE} the name's row in {@code <table>_rowlocks} ({@code NOWAIT} for a zero wait); if there is none,
 *     {@code INSERT … ON CONFLICT DO NOTHING} it in the same transaction and lock it; then draw the token with
 *     {@code nextval} of the lease table's sequence <em>after</em> the lock is held, store it with the holder and
 *     put {@code lock_timeout} back, so the work's own statements are not bounded by the lock's wait.</li>
 * <li>MariaDB: the same with {@code FOR UPDATE WAIT n} (whole seconds, rounded up) or {@code NOWAIT}, and
 *     {@code NEXTVAL}. A missing row is created by its own short {@code INSERT IGNORE} transaction first,
 *     because two InnoDB transactions that both lock a missing key's gap and then insert it deadlock.</li>
 * <li>MySQL 8 and SQLite have no non-transactional sequence, and a token drawn in the lock's own transaction
 *     would be handed out again after a rollback. So a grant has two phases: (1) lock the row, take a fresh
 *     value from the lease table's counter, store it in the row, commit; (2) lock the row again and proceed
 *     only if it still carries that value, else start over. The row's token only grows, and a grant needs
 *     the row's newest value, so grants get strictly increasing tokens and a rolled-back grant's token is
 *     never reused. MySQL bounds each wait with {@code innodb_lock_wait_timeout} (whole seconds, saved and
 *     put back around the lock) or {@code NOWAIT}. SQLite has no row locks: the lock is {@code BEGIN
 *     IMMEDIATE}, the whole database's write lock, bounded by {@code busy_timeout} (saved and put back).</li>
 * <li>Run the work on that connection (a guarded view: it cannot commit, roll back or close it); commit on
 *     success, which releases the lock with the work's writes; roll back on an exception and rethrow.</li>
 * </ol>
 * A connection that failed with a socket or query timeout or a connection error is evicted from the pool and
 * closed, never given back (its replies may be out of step); the lease then reports lost.
 */
final class RowLockStrategy {
    private static final long MAX_WAIT_MILLIS = Integer.MAX_VALUE;
    private static final String MY_NOW = MySqlFamilyLeaseTable.NOW;
    private static final String SQLITE_NOW = SqliteLeaseTable.NOW;

    private final DataSource dataSource;
    private final Dialect dialect;
    private final StrategyTable rows;
    private final String table;
    private final String sequence;
    private final String counter;
    private final String clientId;
    private final String description;

    RowLockStrategy(DataSource dataSource, Dialect dialect, String leaseTable, String clientId, boolean createTable) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.rows = new StrategyTable(dataSource, dialect, leaseTable, "rowlocks", createTable);
        this.table = rows.name();
        this.sequence = leaseTable + "_token_seq";
        this.counter = leaseTable + "_token";
        this.clientId = clientId;
        this.description = "jdbc-rowlock/" + dialect.id() + " (table " + table + ")";
    }

    String description() {
        return description;
    }

    <T> T inTransaction(String name, Duration wait, TransactionWork<T> work) {
        LockNames.validate(name);
        if (wait == null) {
            throw new IllegalArgumentException("wait must not be null (Duration.ZERO tries once)");
        }
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative, was " + wait);
        }
        if (work == null) {
            throw new IllegalArgumentException("work must not be null");
        }
        rows.ensure(description);
        String holder = clientId + "#" + Thread.currentThread().getId();
        long start = System.nanoTime();
        // whole milliseconds, rounded up; the databases take at most an int of them (about 24 days)
        long waitMillis = wait.compareTo(Duration.ofMillis(MAX_WAIT_MILLIS)) >= 0 ? MAX_WAIT_MILLIS
                : wait.toMillis() + (wait.toNanosPart() % 1_000_000 > 0 ? 1 : 0);
        Connection c;
        try {
            c = dataSource.getConnection();
        } catch (SQLException e) {
            throw backendFailure("getting a connection to lock '" + name + "' failed", e);
        }
        Session session;
        try {
            session = new Session(c);
        } catch (SQLException e) {
            ConnectionSupport.discard(dataSource, c, "reading its settings failed");
            throw backendFailure("preparing a connection to lock '" + name + "' failed", e);
        }
        boolean broken = false;
        try {
            long token;
            try {
                token = lock(c, session, name, holder, start, waitMillis);
            } catch (SQLException e) {
                broken = ConnectionSupport.isBroken(e) || !rollback(c, e);
                if (!broken && isLockWaitTimeout(e)) {
                    throw waitTimeout(name, start, waitMillis, e);
                }
                throw backendFailure("locking '" + name + "' failed", e);
            } catch (RuntimeException | Error e) {
                broken = !rollback(c, e);
                throw e;
            }
            if (token < 0) {
                broken = !rollback(c, null);
                throw waitTimeout(name, start, waitMillis, null);
            }
            TransactionLease lease = new TransactionLease(name, token, holder, description);
            ConnectionSupport.Guarded guarded = ConnectionSupport.guard(c,
                    "inTransaction('" + name + "', token " + token + ")");
            T result;
            try {
                result = work.run(guarded.connection(), lease);
            } catch (SQLException e) {
                guarded.end();
                broken = ConnectionSupport.isBroken(e) || !rollback(c, e);
                endLease(lease, broken, e);
                throw backendFailure("the work under '" + name + "' (token " + token + ") failed"
                        + (broken ? " and its connection was discarded" : " and was rolled back"), e);
            } catch (RuntimeException | Error e) {
                guarded.end();
                broken = !rollback(c, e);
                endLease(lease, broken, e);
                throw e;
            }
            guarded.end();
            try {
                commit(c);
            } catch (SQLException e) {
                broken = ConnectionSupport.isBroken(e) || !rollback(c, e);
                lease.lost(e);
                throw backendFailure("commit of the work under '" + name + "' (token " + token + ") failed; "
                        + (broken ? "the connection failed, so whether it committed is unknown"
                        : "it was rolled back"), e);
            }
            lease.ended();
            return result;
        } finally {
            if (broken) {
                ConnectionSupport.discard(dataSource, c, "a statement under '" + name + "' failed with its connection");
            } else {
                try {
                    session.restore();
                    c.close();
                } catch (SQLException e) {
                    ConnectionSupport.discard(dataSource, c, "restoring its settings failed: " + e.getMessage());
                }
            }
        }
    }

    private static void endLease(TransactionLease lease, boolean broken, Throwable cause) {
        if (broken) {
            lease.lost(cause);
        } else {
            lease.ended();
        }
    }

    /**
     * Takes the lock: returns with {@code c} in an open transaction holding it and the fresh token stored, or
     * returns -1 if the wait ran out without an SQL error (MySQL/SQLite: another grant kept getting in first).
     */
    private long lock(Connection c, Session session, String name, String holder, long start, long waitMillis)
            throws SQLException {
        return switch (dialect) {
            case POSTGRESQL -> lockPostgres(c, name, holder, start, waitMillis);
            case MARIADB -> lockMariaDb(c, name, holder, start, waitMillis);
            case MYSQL -> lockMySql(c, session, name, holder, start, waitMillis);
            case SQLITE -> lockSqlite(c, session, name, holder, start, waitMillis);
        };
    }

    private static long remainingMillis(long start, long waitMillis) {
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        return Math.max(0, waitMillis - elapsed);
    }

    private long lockPostgres(Connection c, String name, String holder, long start, long waitMillis)
            throws SQLException {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        boolean nowait = waitMillis == 0;
        // the insert of a missing row may wait for another transaction's insert: bounded too, even for NOWAIT
        String previous = setPgLockTimeout(c, start, waitMillis);
        String select = "SELECT token FROM " + table + " WHERE name = ? FOR UPDATE" + (nowait ? " NOWAIT" : "");
        if (!selectRow(c, select, name)) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (name) VALUES (?)"
                    + " ON CONFLICT (name) DO NOTHING")) {
                ps.setString(1, name);
                ps.executeUpdate();
            }
            setPgLockTimeout(c, start, waitMillis);
            if (!selectRow(c, select, name)) {
                throw new SQLException("the lock row of '" + name + "' in " + table + " was deleted while locking it");
            }
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET token = nextval('" + sequence + "'),"
                + " holder = ?, acquired_at = now() WHERE name = ? RETURNING token, set_config('lock_timeout', ?, true)")) {
            ps.setString(1, holder);
            ps.setString(2, name);
            ps.setString(3, previous);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Sets a transaction-local {@code lock_timeout} of the remaining wait; returns the previous value. */
    private static String setPgLockTimeout(Connection c, long start, long waitMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', ?, true)")) {
            // 0 would mean "no limit" to PostgreSQL: wait at least 1 ms
            ps.setString(1, Math.max(1, remainingMillis(start, waitMillis)) + "ms");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static boolean selectRow(Connection c, String sql, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Whole seconds for InnoDB's wait, rounded up; 0 only for a zero wait. */
    private static long innoDbSeconds(long start, long waitMillis) {
        if (waitMillis == 0) {
            return 0;
        }
        return Math.max(1, (remainingMillis(start, waitMillis) + 999) / 1000);
    }

    private long lockMariaDb(Connection c, String name, String holder, long start, long waitMillis)
            throws SQLException {
        c.setAutoCommit(false);
        for (int tries = 0; ; tries++) {
            long seconds = innoDbSeconds(start, waitMillis);
            String bound = seconds == 0 ? " NOWAIT" : " WAIT " + seconds;
            if (selectRow(c, "SELECT token FROM " + table + " WHERE name = ? FOR UPDATE" + bound, name)) {
                break;
            }
            c.rollback();
            if (tries > 0) {
                throw new SQLException("the lock row of '" + name + "' in " + table + " was deleted while locking it");
            }
            try (PreparedStatement ps = c.prepareStatement("SET STATEMENT innodb_lock_wait_timeout = " + seconds
                    + " FOR INSERT IGNORE INTO " + table + " (name) VALUES (?)")) {
                ps.setString(1, name);
                ps.executeUpdate();
            }
            c.commit();
        }
        long token;
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT NEXTVAL(" + sequence + ")")) {
            rs.next();
            token = rs.getLong(1);
        }
        storeGrant(c, name, holder, token, MY_NOW);
        return token;
    }

    private void storeGrant(Connection c, String name, String holder, long token, String now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET token = ?, holder = ?, acquired_at = "
                + now + " WHERE name = ?")) {
            ps.setLong(1, token);
            ps.setString(2, holder);
            ps.setString(3, name);
            ps.executeUpdate();
        }
    }

    private long lockMySql(Connection c, Session session, String name, String holder, long start, long waitMillis)
            throws SQLException {
        c.setAutoCommit(false);
        while (true) {
            long seconds = innoDbSeconds(start, waitMillis);
            String bound = seconds == 0 ? " NOWAIT" : "";
            if (seconds > 0) {
                session.setInnoDbLockWait(seconds);
            }
            String select = "SELECT token FROM " + table + " WHERE name = ? FOR UPDATE" + bound;
            // phase 1: under the row lock, commit a fresh counter value into the row
            if (!selectRow(c, select, name)) {
                c.rollback();
                try (PreparedStatement ps = c.prepareStatement("INSERT IGNORE INTO " + table + " (name) VALUES (?)")) {
                    ps.setString(1, name);
                    ps.executeUpdate();
                }
                c.commit();
                continue;
            }
            try (Statement st = c.createStatement()) {
                st.executeUpdate("UPDATE " + counter + " SET value = LAST_INSERT_ID(value + 1) WHERE id = 1");
            }
            long token;
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
                rs.next();
                token = rs.getLong(1);
            }
            storeGrant(c, name, holder, token, MY_NOW);
            c.commit();
            // phase 2: lock it again; ours only if nobody committed a newer value in between
            if (seconds > 0) {
                seconds = innoDbSeconds(start, waitMillis);
                session.setInnoDbLockWait(seconds);
            }
            if (readToken(c, select, name) == token) {
                session.restoreInnoDbLockWait();
                return token;
            }
            c.rollback();
            if (remainingMillis(start, waitMillis) == 0) {
                return -1;
            }
        }
    }

    private static long readToken(Connection c, String sql, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }

    private long lockSqlite(Connection c, Session session, String name, String holder, long start, long waitMillis)
            throws SQLException {
        // the transaction is begun by SQL (BEGIN IMMEDIATE), so the driver must stay in auto-commit mode
        c.setAutoCommit(true);
        while (true) {
            // phase 1: under the write lock, commit a fresh counter value into the row
            session.setBusyTimeout(remainingMillis(start, waitMillis));
            long token;
            try (Statement st = c.createStatement()) {
                st.execute("BEGIN IMMEDIATE");
                try {
                    st.executeUpdate("UPDATE " + counter + " SET value = value + 1 WHERE id = 1");
                    try (ResultSet rs = st.executeQuery("SELECT value FROM " + counter + " WHERE id = 1")) {
                        rs.next();
                        token = rs.getLong(1);
                    }
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                            + " (name, token, holder, acquired_at) VALUES (?, ?, ?, " + SQLITE_NOW + ")"
                            + " ON CONFLICT (name) DO UPDATE SET token = excluded.token, holder = excluded.holder,"
                            + " acquired_at = excluded.acquired_at")) {
                        ps.setString(1, name);
                        ps.setLong(2, token);
                        ps.setString(3, holder);
                        ps.executeUpdate();
                    }
                    st.execute("COMMIT");
                } catch (SQLException e) {
                    st.execute("ROLLBACK");
                    throw e;
                }
            }
            // phase 2: take the write lock again; ours only if nobody committed a newer value in between
            session.setBusyTimeout(remainingMillis(start, waitMillis));
            try (Statement st = c.createStatement()) {
                st.execute("BEGIN IMMEDIATE");
            }
            if (readToken(c, "SELECT token FROM " + table + " WHERE name = ?", name) == token) {
                session.restoreBusyTimeout();
                return token;
            }
            try (Statement st = c.createStatement()) {
                st.execute("ROLLBACK");
            }
            if (remainingMillis(start, waitMillis) == 0) {
                return -1;
            }
        }
    }

    private void commit(Connection c) throws SQLException {
        if (dialect == Dialect.SQLITE) {
            try (Statement st = c.createStatement()) {
                st.execute("COMMIT");
            }
        } else {
            c.commit();
        }
    }

    /** Rolls back; returns whether the connection is still fit for reuse. */
    private boolean rollback(Connection c, Throwable primary) {
        try {
            if (dialect == Dialect.SQLITE) {
                try (Statement st = c.createStatement()) {
                    st.execute("ROLLBACK");
                } catch (SQLException e) {
                    String m = String.valueOf(e.getMessage());
                    if (!m.contains("no transaction is active")) {
                        throw e;
                    }
                }
            } else {
                c.rollback();
            }
            return true;
        } catch (SQLException e) {
            if (primary != null) {
                primary.addSuppressed(e);
            }
            return false;
        }
    }

    private boolean isLockWaitTimeout(SQLException e) {
        return switch (dialect) {
            case POSTGRESQL -> "55P03".equals(e.getSQLState());
            case MARIADB, MYSQL -> e.getErrorCode() == 1205 || e.getErrorCode() == 3572;
            case SQLITE -> (e.getErrorCode() & 0xff) == ConnectionSupport.SQLITE_BUSY;
        };
    }

    private LockWaitTimeoutException waitTimeout(String name, long start, long waitMillis, SQLException cause) {
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        Duration bound = switch (dialect) {
            case MARIADB, MYSQL -> Duration.ofSeconds((waitMillis + 999) / 1000);
            default -> Duration.ofMillis(waitMillis);
        };
        String how = switch (dialect) {
            case POSTGRESQL -> waitMillis == 0 ? "NOWAIT" : "lock_timeout " + waitMillis + " ms";
            case MARIADB -> waitMillis == 0 ? "NOWAIT" : "WAIT " + bound.toSeconds() + " s";
            case MYSQL -> waitMillis == 0 ? "NOWAIT" : "innodb_lock_wait_timeout " + bound.toSeconds() + " s";
            case SQLITE -> "busy_timeout " + waitMillis + " ms (SQLite's whole-database write lock)";
        };
        String why = cause != null ? cause.getMessage()
                : "other grants kept committing newer tokens first (the wait ran out between the two phases)";
        return new LockWaitTimeoutException(name, description, waited, bound,
                "row lock of '" + name + "' not had within " + waitMillis + " ms (waited " + waited.toMillis()
                        + " ms; database bound: " + how + "): " + why, cause);
    }

    private LockBackendException backendFailure(String what, SQLException e) {
        return new LockBackendException(description, what + ": " + e.getMessage() + " (SQL state "
                + e.getSQLState() + ", error " + e.getErrorCode() + ")", e);
    }

    /** The connection settings the strategy changes, read once and put back before the connection is returned. */
    private final class Session {
        private final Connection c;
        private final boolean autoCommit;
        private final int isolation;
        private final int prepareThreshold;
        private boolean innoDbWaitSaved;
        private Integer busyTimeout;

        Session(Connection c) throws SQLException {
            this.c = c;
            this.autoCommit = c.getAutoCommit();
            this.isolation = dialect == Dialect.POSTGRESQL ? c.getTransactionIsolation() : -1;
            // one-shot statements: a named prepared statement breaks behind a pooler in transaction mode
            this.prepareThreshold = dialect == Dialect.POSTGRESQL ? PgStatements.oneShot(c) : 0;
        }

        void setInnoDbLockWait(long seconds) throws SQLException {
            try (Statement st = c.createStatement()) {
                st.execute(innoDbWaitSaved ? "SET SESSION innodb_lock_wait_timeout = " + seconds
                        : "SET @baton_lock_wait = @@SESSION.innodb_lock_wait_timeout,"
                        + " SESSION innodb_lock_wait_timeout = " + seconds);
            }
            innoDbWaitSaved = true;
        }

        void restoreInnoDbLockWait() throws SQLException {
            if (innoDbWaitSaved) {
                try (Statement st = c.createStatement()) {
                    st.execute("SET SESSION innodb_lock_wait_timeout = @baton_lock_wait");
                }
                innoDbWaitSaved = false;
            }
        }

        void setBusyTimeout(long millis) throws SQLException {
            try (Statement st = c.createStatement()) {
                if (busyTimeout == null) {
                    try (ResultSet rs = st.executeQuery("PRAGMA busy_timeout")) {
                        rs.next();
                        busyTimeout = rs.getInt(1);
                    }
                }
                st.execute("PRAGMA busy_timeout = " + Math.min(millis, MAX_WAIT_MILLIS));
            }
        }

        void restoreBusyTimeout() throws SQLException {
            if (busyTimeout != null) {
                try (Statement st = c.createStatement()) {
                    st.execute("PRAGMA busy_timeout = " + busyTimeout);
                }
                busyTimeout = null;
            }
        }

        void restore() throws SQLException {
            restoreInnoDbLockWait();
            restoreBusyTimeout();
            if (c.getAutoCommit() != autoCommit) {
                c.setAutoCommit(autoCommit);
            }
            if (isolation >= 0 && c.getTransactionIsolation() != isolation) {
                c.setTransactionIsolation(isolation);
            }
            if (dialect == Dialect.POSTGRESQL) {
                PgStatements.restore(c, prepareThreshold);
            }
        }
    }
}
