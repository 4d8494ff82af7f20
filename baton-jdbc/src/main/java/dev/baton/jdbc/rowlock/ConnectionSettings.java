package dev.baton.jdbc.rowlock;

import dev.baton.jdbc.internal.DialectTraits;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** The connection settings the row-lock strategy changes, read once and put back before the connection is returned. */
final class ConnectionSettings {
    private static final long MAX_WAIT_MILLIS = Integer.MAX_VALUE;
    private final Connection c;
    private final DialectTraits traits;
    private final boolean autoCommit;
    private final int isolation;
    private final int prepareThreshold;
    private boolean innoDbWaitSaved;
    private Integer busyTimeout;

    ConnectionSettings(Connection c, RowLockStatements statements, DialectTraits traits) throws SQLException {
        this.c = c;
        this.autoCommit = c.getAutoCommit();
        this.traits = traits;
        this.isolation = statements.changesIsolation() ? c.getTransactionIsolation() : -1;
        // one-shot statements: a named prepared statement breaks behind a pooler in transaction mode
        this.prepareThreshold = traits.oneShotStatements(c);
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
        traits.restoreStatements(c, prepareThreshold);
    }
}
