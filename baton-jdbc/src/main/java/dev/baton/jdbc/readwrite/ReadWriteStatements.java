package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The SQL of the lease strategy's read-write locks ({@link ReadWriteTable}) in one dialect family: the database
 * clock, the gate row, the upsert of a holder's row and the token source. Chosen once per client by
 * {@link #of(Dialect, String)}.
 */
abstract class ReadWriteStatements {
    /** The lease table, whose sequence or counter gives the tokens. */
    final String table;
    /** The read-write table, {@code <table>_rw}. */
    final String rw;

    ReadWriteStatements(String table) {
        this.table = table;
        this.rw = table + "_rw";
    }

    /** The statement set of a dialect: the one place the read-write strategy looks at it. */
    static ReadWriteStatements of(Dialect dialect, String table) {
        return switch (dialect) {
            case POSTGRESQL -> new PostgresReadWriteStatements(table);
            case MARIADB -> new MySqlReadWriteStatements(table, true);
            case MYSQL -> new MySqlReadWriteStatements(table, false);
            case SQLITE -> new SqliteReadWriteStatements(table);
        };
    }

    /** The database clock. */
    abstract String now();

    /** The clock plus a number of milliseconds (a parameter or literal). */
    abstract String plus(String millis);

    /** An expression for the row's remaining lease in milliseconds. */
    abstract String remainingMillis();

    /** Step 0, before the attempt's transaction (auto-commit on): by default nothing. */
    void beforeAttempt(Connection c, String name) throws SQLException {
    }

    /** The attempt's first statements, in its transaction: by default nothing. */
    void beginAttempt(Connection c, String name) throws SQLException {
    }

    /**
     * Step 1 and 2: serialises decisions for the name and deletes its expired rows. By default: lock the gate
     * row ({@code FOR UPDATE}), then delete the expired holder rows.
     */
    void lockGateAndPurge(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + rw
                + " WHERE name = ? AND owner = '' FOR UPDATE")) {
            ps.setString(1, name);
            ps.executeQuery().close();
        }
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rw
                + " WHERE name = ? AND owner <> '' AND expires_at <= " + now())) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
    }

    /**
     * A {@code FROM} clause the renewal's {@code UPDATE} carries (with its leading space), or empty: PostgreSQL's
     * makes the renewal's commit flushed whatever the server's {@code synchronous_commit}.
     */
    String renewFrom() {
        return "";
    }

    /** Inserts or replaces the row of (name, owner): parameters name, owner, mode, token, lease millis. */
    abstract String upsert();

    /** A fresh token from the lease table's sequence or counter, in the attempt's transaction. */
    abstract long nextToken(Connection c) throws SQLException;

    /** A lock name read back from a result set. */
    String readName(ResultSet rs, int column) throws SQLException {
        return rs.getString(column);
    }

    /** After a release that deleted a row: wakes waiters in other clients where the dialect can. */
    void announceRelease(Connection c, String channel, String name) throws SQLException {
    }
}
