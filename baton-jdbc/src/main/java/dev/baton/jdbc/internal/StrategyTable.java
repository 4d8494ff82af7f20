package dev.baton.jdbc.internal;

import dev.baton.LockBackendException;
import dev.baton.MissingSchemaException;
import dev.baton.jdbc.Dialect;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A table a transaction strategy needs beside the lease table ({@code <table>_rowlocks}, {@code <table>_versions}),
 * checked on the strategy's first use in a client and created then from its shipped DDL
 * ({@code schema/<dialect>-<suffix>.sql}) if missing and creation is allowed.
 */
public final class StrategyTable {
    private final DataSource dataSource;
    private final DialectTraits traits;
    private final String name;
    private final String resource;
    private final String baseTable;
    private final boolean create;
    private volatile boolean ready;

    public StrategyTable(DataSource dataSource, Dialect dialect, String baseTable, String suffix, boolean create) {
        this.dataSource = dataSource;
        this.traits = DialectTraits.of(dialect);
        this.baseTable = baseTable;
        this.name = baseTable + "_" + suffix;
        this.resource = "/dev/baton/jdbc/schema/" + dialect.id() + "-" + suffix + ".sql";
        this.create = create;
    }

    public String name() {
        return name;
    }

    /** The shipped DDL resource, named in messages. */
    public String resource() {
        return resource;
    }

    /**
     * Makes sure the table exists, once per client.
     *
     * @throws MissingSchemaException if it is missing and may not be created
     * @throws LockBackendException if the database could not be reached
     */
    public void ensure(String backend) {
        if (ready) {
            return;
        }
        synchronized (this) {
            if (ready) {
                return;
            }
            try {
                ConnectionSupport.autoCommitted(dataSource, traits, c -> {
                    if (!exists(c)) {
                        if (!create) {
                            throw new MissingSchemaException("table '" + name + "' is missing on " + backend + ": apply the DDL"
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

    /** Runs the DDL (PostgreSQL: in one transaction, serialised, committed here). */
    private void createTable(Connection c) throws SQLException {
        traits.executeDdl(c, Ddl.statements(resource, baseTable));
    }
}
