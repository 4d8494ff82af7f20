package dev.baton.jdbc.rowlock;

import dev.baton.jdbc.internal.TokenCounters;
import dev.baton.jdbc.internal.SqlClocks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * MySQL 8: no non-transactional sequence, and a token drawn in the lock's own transaction would be handed out
 * again after a rollback. So a grant has two phases: (1) lock the row, take a fresh value from the lease
 * table's counter, store it in the row, commit; (2) lock the row again and proceed only if it still carries
 * that value, else start over. The row's token only grows, and a grant needs the row's newest value, so grants
 * get strictly increasing tokens and a rolled-back grant's token is never reused. Each wait is bounded by
 * {@code innodb_lock_wait_timeout} (whole seconds, saved and put back around the lock) or {@code NOWAIT}.
 * (MariaDB, which has sequences and {@code FOR UPDATE WAIT n}, is {@link MariaDbRowLockStatements}.)
 */
class MySqlRowLockStatements extends RowLockStatements {
    static final String NOW = SqlClocks.MYSQL_NOW;

    MySqlRowLockStatements(String rowLockTable, String leaseTable) {
        super(rowLockTable, leaseTable);
    }

    @Override
    long lock(Connection c, ConnectionSettings settings, String name, String holder, long start, long waitMillis)
            throws SQLException {
        c.setAutoCommit(false);
        while (true) {
            long seconds = innoDbSeconds(start, waitMillis);
            String bound = seconds == 0 ? " NOWAIT" : "";
            if (seconds > 0) {
                settings.setInnoDbLockWait(seconds);
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
                TokenCounters.bump(st, counter, "UPDATE " + counter + " SET value = LAST_INSERT_ID(value + 1) WHERE id = 1");
            }
            long token;
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
                rs.next();
                token = rs.getLong(1);
            }
            storeGrant(c, name, holder, token);
            c.commit();
            // phase 2: lock it again; ours only if nobody committed a newer value in between
            if (seconds > 0) {
                seconds = innoDbSeconds(start, waitMillis);
                settings.setInnoDbLockWait(seconds);
            }
            if (readToken(c, select, name) == token) {
                settings.restoreInnoDbLockWait();
                return token;
            }
            c.rollback();
            if (remainingMillis(start, waitMillis) == 0) {
                return -1;
            }
        }
    }

    /** Stores a grant's token and holder in the locked row. */
    void storeGrant(Connection c, String name, String holder, long token) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET token = ?, holder = ?, acquired_at = "
                + NOW + " WHERE name = ?")) {
            ps.setLong(1, token);
            ps.setString(2, holder);
            ps.setString(3, name);
            ps.executeUpdate();
        }
    }

    /** Whole seconds for InnoDB's wait, rounded up; 0 only for a zero wait. */
    static long innoDbSeconds(long start, long waitMillis) {
        if (waitMillis == 0) {
            return 0;
        }
        return Math.max(1, (remainingMillis(start, waitMillis) + 999) / 1000);
    }

    /** Lock wait timeout exceeded (1205); NOWAIT found the row locked (3572). */
    @Override
    boolean isLockWaitTimeout(SQLException e) {
        return e.getErrorCode() == 1205 || e.getErrorCode() == 3572;
    }

    /** InnoDB counts whole seconds. */
    @Override
    Duration bound(long waitMillis) {
        return Duration.ofSeconds((waitMillis + 999) / 1000);
    }

    @Override
    String how(long waitMillis, Duration bound) {
        return waitMillis == 0 ? "NOWAIT" : "innodb_lock_wait_timeout " + bound.toSeconds() + " s";
    }
}
