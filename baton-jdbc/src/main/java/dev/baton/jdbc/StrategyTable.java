package dev.baton.jdbc;

import dev.baton.LockBackendException;
import dev.baton.LockException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A table a transaction strategy needs beside the lease table ({@code <table>_rowlocks}, {@code <table>_versions}),
 * checked on the strategy's first use in a client and created then from its shipped DDL
 * ({@code schema/<dialect>-<suffix>.sql}) if missing and creation is allowed.
 */
final class StrategyTable {
    private final DataSource dataSource;
    private final Dialect dialect;
    private final String name;
    private final String resource;
    private final String baseTable;
    private final boolean create;
    private volatile boolean ready;

    StrategyTable(DataSource dataSource, Dialect dialect, String baseTable, String suffix, boolean create) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.baseTable = baseTable;
        this.name = baseTable + "_" + suffix;
        this.resource = "/dev/baton/jdbc/schema/" + dialect.id() + "-" + suffix + ".sql";
        this.create = create;
    }

    String name() {
        return name;
    }

    /** The shipped DDL resource, named in messages. */
    String resource() {
        return resource;
    }

    /**
     * Makes sure the table exists, once per client.
     *
     * @throws LockException        if it is missing and may not be created
     * @throws LockBackendException if the database could not be reached
     */
    void ensure(String backend) {
        if (ready) {
            return;
        }
        synchronized (this) {
            if (ready) {
                return;
            }
            try {
                ConnectionSupport.autoCommitted(dataSource, dialect, c -> {
                    if (!exists(c)) {
                        if (!create) {
                            throw new LockException("table '" + name + "' is missing on " + backend + ": apply the DDL"
                                    + " in " + resource + " (shipped in baton-jdbc), or call createTableIfMissing() on"
                                    + " the builder");
                        }
                        createTable(c);
                    }
                    return null;
                });
                ready = true;
            } catch (SQLException e) {
                throw new LockBackendException(backend, "checking or creating table '" + name + "' from " + resource
                        + " failed: " + e.getMessage() + " (SQL state " + e.getSQLState() + ")", e);
            }
        }
    }

    private boolean exists(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SELECT 1 FROM " + name + " WHERE 1 = 0");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /** Runs the DDL on a connection in auto-commit mode (PostgreSQL: in one transaction, committed here). */
    private void createTable(Connection c) throws SQLException {
        c.setAutoCommit(dialect != Dialect.POSTGRESQL);
        try {
            if (dialect == Dialect.POSTGRESQL) {
                // concurrent CREATE … IF NOT EXISTS can collide in PostgreSQL's catalog; serialise it as the
                // lease table's creation does
                try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                    lock.setLong(1, 0x4261746f6e444446L);
                    lock.execute();
                }
            }
            try (Statement st = c.createStatement()) {
                for (String sql : LeaseTable.ddl(resource, baseTable)) {
                    st.execute(sql);
                }
            }
            if (dialect == Dialect.POSTGRESQL) {
                c.commit();
            }
        } catch (SQLException | RuntimeException e) {
            if (!c.getAutoCommit()) {
                c.rollback();
            }
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }
}
