package dev.baton.jdbc;

import dev.baton.testkit.TestServers;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/** PostgreSQL at 127.0.0.1:5432, database {@code test}, user {@code postgres} (trust auth). */
public class PostgresFixture extends JdbcFixture {
    static final String HOST = "127.0.0.1";
    static final int PORT = 5432;
    static final String ADMIN_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    public PostgresFixture() {
        TestServers.require("PostgreSQL", HOST, PORT);
    }

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    String table() {
        return "baton_contract";
    }

    @Override
    DataSource rawDataSource(int proxyPort) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL("jdbc:postgresql://127.0.0.1:" + proxyPort + "/test?user=postgres&socketTimeout=5&tcpKeepAlive=true"
                + "&connectTimeout=3&ApplicationName=baton-contract");
        return ds;
    }

    @Override
    String[] hostAndPort() {
        return new String[] {HOST, Integer.toString(PORT)};
    }

    @Override
    String sessionIdQuery() {
        return "SELECT pg_backend_pid()";
    }

    @Override
    Connection admin() throws SQLException {
        return DriverManager.getConnection(ADMIN_URL);
    }

    @Override
    void killSession(Connection admin, long sessionId) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?)")) {
            ps.setInt(1, (int) sessionId);
            ps.execute();
        }
    }

    @Override
    int countLive(Connection admin, java.util.List<Long> ids) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY (?)")) {
            ps.setArray(1, admin.createArrayOf("int4", ids.stream().map(Long::intValue).toArray()));
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @Override
    String expireSql() {
        return "UPDATE " + table() + " SET expires_at = now() - interval '1 millisecond' WHERE name = ?";
    }

    @Override
    public boolean notifiesWaiters() {
        return true;
    }
}
