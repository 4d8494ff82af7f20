package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.internal.PgDurableCommit;
import dev.baton.jdbc.internal.ReleaseNotice;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** PostgreSQL: {@code now()}, {@code ON CONFLICT}, the lease table's sequence, {@code pg_notify} on release. */
final class PostgresReadWriteStatements extends ReadWriteStatements {

    PostgresReadWriteStatements(String table) {
        super(table);
    }

    @Override
    String now() {
        return "now()";
    }

    @Override
    String plus(String millis) {
        return now() + " + " + millis + " * interval '1 millisecond'";
    }

    @Override
    String remainingMillis() {
        return "ceil(extract(epoch FROM (expires_at - now())) * 1000)::bigint";
    }

    /**
     * The attempt's transaction commits flushed whatever the server's {@code synchronous_commit}: its gate insert
     * sets it {@code on} for the transaction ({@link PgDurableCommit}), so a grant is not lost in a crash.
     * Every statement of the attempt at READ COMMITTED, whatever the pool's default: the read after the gate
     * lock must see every grant committed before it (under REPEATABLE READ the snapshot would predate the wait
     * for the gate), and a gate row another attempt created while this insert waited for it is then simply
     * there (under REPEATABLE READ: 40001, as it was committed after the statement's snapshot).
     */
    @Override
    void beginAttempt(Connection c, String name) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + rw
                + " (name, owner, mode, token, acquired_at, expires_at)"
                + " SELECT ?, '', 'g', 0, now(), now() FROM " + PgDurableCommit.FROM_ITEM + " ON CONFLICT DO NOTHING")) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
    }

    @Override
    String renewFrom() {
        return " FROM " + PgDurableCommit.FROM_ITEM;
    }

    @Override
    String upsert() {
        return "INSERT INTO " + rw + " (name, owner, mode, token, acquired_at, expires_at) VALUES (?, ?, ?, ?, "
                + now() + ", " + plus("?") + ")"
                + " ON CONFLICT (name, owner) DO UPDATE SET mode = excluded.mode, token = excluded.token,"
                + " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at";
    }

    @Override
    long nextToken(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT nextval('" + table + "_token_seq')")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    void announceRelease(Connection c, String channel, String name) throws SQLException {
        if (channel == null) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, channel);
            ps.setString(2, ReleaseNotice.toEveryone(name));
            ps.execute();
        }
    }
}
