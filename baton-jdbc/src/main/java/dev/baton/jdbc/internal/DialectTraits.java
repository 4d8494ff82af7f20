package dev.baton.jdbc.internal;

import dev.baton.jdbc.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * What the shared connection plumbing does differently per dialect, apart from any strategy's SQL (which
 * lives in each strategy's statement set): whether statements must be one-shot (PostgreSQL, so they work
 * through a pooler in transaction mode) and which driver errors are a lost race. Chosen once per client by
 * {@link #of(Dialect)}.
 */
public abstract class DialectTraits {
    private static final DialectTraits POSTGRES = new Postgres(true);
    private static final DialectTraits POSTGRES_DIRECT = new Postgres(false);

    /**
     * PostgreSQL: statements one-shot ({@code oneShot}) unless the client's connections were found to reach the
     * server directly, where the driver's named prepared statements (after {@code prepareThreshold} uses of one SQL
     * text on a connection) save the server parsing and planning every statement again.
     */
    private static final class Postgres extends DialectTraits {
        private final boolean oneShot;

        private Postgres(boolean oneShot) {
            this.oneShot = oneShot;
        }

        @Override
        public int oneShotStatements(Connection c) throws SQLException {
            return oneShot ? PgStatements.oneShot(c) : 0;
        }

        @Override
        public void restoreStatements(Connection c, int previous) throws SQLException {
            if (oneShot) {
                PgStatements.restore(c, previous);
            }
        }

        @Override
        public boolean isSerializationFailure(SQLException e) {
            return isStandardSerializationFailure(e) || e.getErrorCode() == MYSQL_DEADLOCK;
        }

        /** Concurrent {@code CREATE … IF NOT EXISTS} can still collide in PostgreSQL's catalog: serialised. */
        @Override
        public void executeDdl(Connection c, List<String> statements) throws SQLException {
            boolean ac = c.getAutoCommit();
            c.setAutoCommit(false);
            try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                lock.setLong(1, 0x4261746f6e444446L); // "BatonDDF"
                lock.execute();
                try (Statement st = c.createStatement()) {
                    for (String sql : statements) {
                        st.execute(sql);
                    }
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(ac);
            }
        }
    }

    private static final DialectTraits MYSQL_FAMILY = new DialectTraits() {
        @Override
        public boolean isSerializationFailure(SQLException e) {
            return isStandardSerializationFailure(e) || e.getErrorCode() == MYSQL_DEADLOCK;
        }
    };
    private static final DialectTraits SQLITE = new DialectTraits() {
        @Override
        public boolean isSerializationFailure(SQLException e) {
            return isStandardSerializationFailure(e) || e.getErrorCode() == ConnectionSupport.SQLITE_BUSY;
        }
    };
    /** MySQL/MariaDB: deadlock found when trying to get lock. */
    private static final int MYSQL_DEADLOCK = 1213;

    private DialectTraits() {
    }

    /**
     * The traits of a dialect for connections that may pass through a pooler: on PostgreSQL, one-shot statements.
     * The one place the plumbing looks at the dialect.
     */
    public static DialectTraits of(Dialect dialect) {
        return of(dialect, false);
    }

    /**
     * The traits of a dialect; {@code direct}: the client's connections were found to reach a PostgreSQL server
     * without a pooler between (the login's process id is the session's), so statements may be prepared by name.
     */
    public static DialectTraits of(Dialect dialect, boolean direct) {
        if (dialect == Dialect.POSTGRESQL && direct) {
            return POSTGRES_DIRECT;
        }
        return switch (dialect) {
            case POSTGRESQL -> POSTGRES;
            case MARIADB, MYSQL -> MYSQL_FAMILY;
            case SQLITE -> SQLITE;
        };
    }

    /**
     * Makes statements created on {@code c} from now on one-shot (no named server-side prepared statements)
     * where the dialect needs it; returns what {@link #restoreStatements} takes to put the setting back.
     */
    public int oneShotStatements(Connection c) throws SQLException {
        return 0;
    }

    /** Puts back what {@link #oneShotStatements} changed, before the connection goes back to its pool. */
    public void restoreStatements(Connection c, int previous) throws SQLException {
    }

    /**
     * Runs DDL statements (idempotent, {@code IF NOT EXISTS}) so that they commit, whatever the connection's
     * auto-commit setting, which is put back.
     */
    public void executeDdl(Connection c, List<String> statements) throws SQLException {
        boolean ac = c.getAutoCommit();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            for (String sql : statements) {
                st.execute(sql);
            }
        } finally {
            c.setAutoCommit(ac);
        }
    }

    /** Whether the error is a serialization failure or deadlock: the transaction lost a race, retry it. */
    public abstract boolean isSerializationFailure(SQLException e);

    private static boolean isStandardSerializationFailure(SQLException e) {
        String state = e.getSQLState();
        return "40001".equals(state) || "40P01".equals(state);
    }
}
