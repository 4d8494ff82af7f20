package dev.baton.jdbc.scheduled;

import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.SqlClocks;

import dev.baton.jdbc.internal.ReleaseNotice;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The SQL of {@link ScheduledRuns}' step 3 in one dialect family (step 1 is the lease table's own acquisition):
 * keep the row taken until {@code acquired_at + atLeastFor}. Chosen once per client by {@link #of}.
 */
abstract class ScheduledStatements {
    private static final String MATCH = " WHERE name = ? AND owner = ? AND token = ?";
    final String table;

    ScheduledStatements(String table) {
        this.table = table;
    }

    /** The statement set of a dialect: the one place the scheduled strategy looks at it. */
    static ScheduledStatements of(Dialect dialect, String table, String releaseChannel) {
        return switch (dialect) {
            case POSTGRESQL -> new Postgres(table, releaseChannel);
            case MARIADB, MYSQL -> new MySql(table);
            case SQLITE -> new Sqlite(table);
        };
    }

    /**
     * Sets {@code expires_at = GREATEST(now, acquired_at + atLeastFor)} where name, owner and token match;
     * returns how many rows it kept (0: another runner took the name over meanwhile).
     */
    abstract int keep(Connection c, String name, String owner, long token, Duration atLeastFor) throws SQLException;

    static int bindKey(PreparedStatement ps, int first, String name, String owner, long token) throws SQLException {
        ps.setString(first, name);
        ps.setString(first + 1, owner);
        ps.setLong(first + 2, token);
        return first + 3;
    }

    /** PostgreSQL: seconds as a double; when the row is freed at once, lease waiters hear {@code NOTIFY}. */
    static final class Postgres extends ScheduledStatements {
        private final String sql;
        private final String channel;

        Postgres(String table, String channel) {
            super(table);
            this.channel = channel;
            this.sql = "WITH kept AS (UPDATE " + table + " SET expires_at = GREATEST(now(), acquired_at"
                    + " + make_interval(secs => ?))" + MATCH + " RETURNING name, expires_at <= now() AS freed),"
                    + " woken AS (SELECT pg_notify(?, " + ReleaseNotice.toEveryoneSql("name") + ") FROM kept WHERE freed)"
                    + " SELECT (SELECT count(*) FROM kept), (SELECT count(*) FROM woken)";
        }

        @Override
        int keep(Connection c, String name, String owner, long token, Duration atLeastFor) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setDouble(1, atLeastFor.toNanos() / 1e9);
                int i = bindKey(ps, 2, name, owner, token);
                ps.setString(i, channel);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            }
        }
    }

    /** MariaDB and MySQL: microseconds. */
    static final class MySql extends ScheduledStatements {
        private final String sql;

        MySql(String table) {
            super(table);
            this.sql = "UPDATE " + table + " SET expires_at = GREATEST(" + SqlClocks.MYSQL_NOW + ","
                    + " acquired_at + INTERVAL ? MICROSECOND)" + MATCH;
        }

        @Override
        int keep(Connection c, String name, String owner, long token, Duration atLeastFor) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, atLeastFor.toNanos() / 1000);
                bindKey(ps, 2, name, owner, token);
                return ps.executeUpdate();
            }
        }
    }

    /** SQLite: milliseconds. */
    static final class Sqlite extends ScheduledStatements {
        private final String sql;

        Sqlite(String table) {
            super(table);
            this.sql = "UPDATE " + table + " SET expires_at = MAX(" + SqlClocks.SQLITE_NOW + ", acquired_at + ?)" + MATCH;
        }

        @Override
        int keep(Connection c, String name, String owner, long token, Duration atLeastFor) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, atLeastFor.toMillis());
                bindKey(ps, 2, name, owner, token);
                return ps.executeUpdate();
            }
        }
    }
}
