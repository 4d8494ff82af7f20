package dev.baton.jdbc.rowlock;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * MariaDB: {@code SELECT … FOR UPDATE WAIT n} (whole seconds, rounded up) or {@code NOWAIT}, then {@code NEXTVAL}
 * of the lease table's sequence under the lock, in one phase. A missing row is created by its own short
 * {@code INSERT IGNORE} transaction first, because two InnoDB transactions that both lock a missing key's gap and
 * then insert it deadlock.
 */
final class MariaDbRowLockStatements extends MySqlRowLockStatements {

    MariaDbRowLockStatements(String rowLockTable, String leaseTable) {
        super(rowLockTable, leaseTable);
    }

    @Override
    long lock(Connection c, ConnectionSettings settings, String name, String holder, long start, long waitMillis)
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
        storeGrant(c, name, holder, token);
        return token;
    }

    @Override
    String how(long waitMillis, Duration bound) {
        return waitMillis == 0 ? "NOWAIT" : "WAIT " + bound.toSeconds() + " s";
    }
}
