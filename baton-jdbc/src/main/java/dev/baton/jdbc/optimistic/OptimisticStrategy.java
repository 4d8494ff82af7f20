package dev.baton.jdbc.optimistic;

import dev.baton.LockBackendException;
import dev.baton.LockInterruptedException;
import dev.baton.LockNames;
import dev.baton.OptimisticConflictException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.OptimisticLock;
import dev.baton.jdbc.VersionedWork;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.internal.StrategyTable;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The optimistic version strategy behind {@link dev.baton.jdbc.JdbcLockClient#optimistic}: a row per name in
 * {@code <table>_versions}. Not re-entrant (nothing is held), not fair; the version is the fencing token.
 *
 * <p>Algorithm of {@link OptimisticLock#update}, on one connection borrowed for the whole call:
 * <ol>
 *   <li>Begin a transaction and read the name's version; a missing row is first created at version 1 by its
 *       own short transaction ({@link OptimisticStatements#insertIfMissing}).</li>
 *   <li>Run the work on a guarded view of the connection (it cannot commit, roll back or close it).</li>
 *   <li>{@code UPDATE … SET version = version + 1 WHERE name = ? AND version = ?}. The compare-and-set is a
 *       write, so it waits for (PostgreSQL, InnoDB: the row lock; SQLite: the write lock) and then sees the
 *       newest committed version whatever the isolation level: exactly one of two attempts that read the same
 *       version commits.</li>
 *   <li>One row updated: commit and return. None, or a serialization failure or deadlock (SQL state
 *       40001/40P01, MySQL 1213, SQLite {@code SQLITE_BUSY}, which WAL mode reports at once when a read
 *       snapshot went stale): roll back, back off (jittered, 5 ms doubling to 200 ms) and go to 1, at most
 *       {@code maxAttempts} times.</li>
 * </ol>
 * A connection that failed with its connection is evicted from the pool, never given back.
 */
public final class OptimisticStrategy {
    static final long FIRST_BACKOFF_MILLIS = 5;
    static final long MAX_BACKOFF_MILLIS = 200;

    private final DataSource dataSource;
    private final DialectTraits traits;
    private final StrategyTable versions;
    private final OptimisticStatements statements;
    private final String table;
    private final String description;

    public OptimisticStrategy(DataSource dataSource, Dialect dialect, String leaseTable, boolean createTable) {
        this.dataSource = dataSource;
        this.traits = DialectTraits.of(dialect);
        this.versions = new StrategyTable(dataSource, dialect, leaseTable, "versions", createTable);
        this.table = versions.name();
        this.statements = OptimisticStatements.of(dialect, table);
        this.description = "jdbc-optimistic/" + dialect.id() + " (table " + table + ")";
    }

    public OptimisticLock lock(String name) {
        LockNames.validate(name);
        return new Handle(name);
    }

    private final class Handle implements OptimisticLock {
        private final String name;

        Handle(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public long version() {
            versions.ensure(description);
            try {
                return ConnectionSupport.autoCommitted(dataSource, traits, c -> read(c, name));
            } catch (SQLException e) {
                throw failure("reading the version of '" + name + "' failed", e);
            }
        }

        @Override
        public <T> T update(int maxAttempts, VersionedWork<T> work) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
            }
            if (work == null) {
                throw new IllegalArgumentException("work must not be null");
            }
            versions.ensure(description);
            Connection c;
            try {
                c = dataSource.getConnection();
            } catch (SQLException e) {
                throw failure("getting a connection for the optimistic update of '" + name + "' failed", e);
            }
            boolean autoCommit;
            int prepareThreshold;
            try {
                autoCommit = c.getAutoCommit();
                // one-shot statements: a named prepared statement breaks behind a pooler in transaction mode
                prepareThreshold = traits.oneShotStatements(c);
            } catch (SQLException e) {
                ConnectionSupport.discard(dataSource, c, "reading auto-commit failed");
                throw failure("preparing a connection for '" + name + "' failed", e);
            }
            boolean broken = false;
            long lastVersion = -1;
            int attempt = 0;
            try {
                while (true) {
                    attempt++;
                    long version;
                    try {
                        version = readOrCreate(c, name);
                    } catch (SQLException e) {
                        broken = ConnectionSupport.isBroken(e) || !rollback(c, e);
                        throw failure("reading the version of '" + name + "' failed", e);
                    }
                    lastVersion = version;
                    boolean won;
                    ConnectionSupport.Guarded guarded = ConnectionSupport.guard(c,
                            "optimistic('" + name + "') at version " + version);
                    T result;
                    try {
                        result = work.apply(guarded.connection(), version);
                        guarded.end();
                        won = compareAndSet(c, name, version);
                        if (won) {
                            c.commit();
                            return result;
                        }
                        c.rollback();
                    } catch (SQLException e) {
                        guarded.end();
                        if (ConnectionSupport.isBroken(e) || !rollback(c, e)) {
                            broken = true;
                            throw failure("the optimistic update of '" + name + "' at version " + version
                                    + " failed with its connection (attempt " + attempt + " of " + maxAttempts + ")", e);
                        }
                        if (!traits.isSerializationFailure(e)) {
                            throw failure("the optimistic update of '" + name + "' at version " + version
                                    + " failed and was rolled back (attempt " + attempt + " of " + maxAttempts + ")", e);
                        }
                    } catch (RuntimeException | Error e) {
                        guarded.end();
                        broken = !rollback(c, e);
                        throw e;
                    }
                    if (attempt >= maxAttempts) {
                        throw new OptimisticConflictException(name, attempt, lastVersion, description
                                + ": optimistic update of '" + name + "' lost to concurrent writers in all " + attempt
                                + " attempt(s) (last version read " + lastVersion + "); nothing was written");
                    }
                    backoff(attempt);
                }
            } finally {
                if (broken) {
                    ConnectionSupport.discard(dataSource, c, "the optimistic update of '" + name + "' failed with it");
                } else {
                    try {
                        c.setAutoCommit(autoCommit);
                        traits.restoreStatements(c, prepareThreshold);
                        c.close();
                    } catch (SQLException e) {
                        ConnectionSupport.discard(dataSource, c, "restoring auto-commit failed: " + e.getMessage());
                    }
                }
            }
        }

        private void backoff(int attempt) {
            long cap = Math.min(MAX_BACKOFF_MILLIS, FIRST_BACKOFF_MILLIS << Math.min(attempt - 1, 20));
            long sleep = ThreadLocalRandom.current().nextLong(cap / 2, cap + 1);
            try {
                TimeUnit.MILLISECONDS.sleep(sleep);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockInterruptedException(name, "interrupted in the backoff after attempt " + attempt
                        + " of the optimistic update of '" + name + "' on " + description);
            }
        }

        @Override
        public String toString() {
            return "OptimisticLock[" + name + " on " + description + "]";
        }
    }

    /** Begins the attempt's transaction with the version read; creates the row at 1 first if missing. */
    private long readOrCreate(Connection c, String name) throws SQLException {
        c.setAutoCommit(false);
        long v = read(c, name);
        if (v > 0) {
            return v;
        }
        c.rollback();
        try (PreparedStatement ps = c.prepareStatement(statements.insertIfMissing())) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
        c.commit();
        v = read(c, name);
        if (v <= 0) {
            throw new SQLException("the version row of '" + name + "' in " + table + " vanished after its creation");
        }
        return v;
    }

    /** The version, or 0 if there is no row. */
    private long read(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT version FROM " + table + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    private boolean compareAndSet(Connection c, String name, long version) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET version = version + 1"
                + " WHERE name = ? AND version = ?")) {
            ps.setString(1, name);
            ps.setLong(2, version);
            return ps.executeUpdate() == 1;
        }
    }

    private static boolean rollback(Connection c, Throwable primary) {
        try {
            c.rollback();
            return true;
        } catch (SQLException e) {
            primary.addSuppressed(e);
            return !ConnectionSupport.isBroken(e);
        }
    }

    private LockBackendException failure(String what, SQLException e) {
        return new LockBackendException(description, what + ": " + e.getMessage() + " (SQL state " + e.getSQLState()
                + ", error " + e.getErrorCode() + ")", e);
    }
}
