package dev.baton.jdbc;

import dev.baton.testkit.TestServers;
import org.mariadb.jdbc.MariaDbDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** MariaDB at 127.0.0.1:3306, database {@code test}, user {@code root} without password. */
public class MariaDbFixture extends JdbcFixture {
    static final String HOST = "127.0.0.1";
    static final int PORT = 3306;
    static final String ADMIN_URL = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

    public MariaDbFixture() {
        TestServers.require("MariaDB", HOST, PORT);
    }

    @Override
    public String name() {
        return "mariadb";
    }

    @Override
    String table() {
        return "baton_contract";
    }

    @Override
    DataSource rawDataSource(int proxyPort) {
        try {
            return new MariaDbDataSource("jdbc:mariadb://127.0.0.1:" + proxyPort
                    + "/test?user=root&socketTimeout=5000&connectTimeout=3000&tcpKeepAlive=true");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    String[] hostAndPort() {
        return new String[] {HOST, Integer.toString(PORT)};
    }

    @Override
    String sessionIdQuery() {
        return "SELECT CONNECTION_ID()";
    }

    @Override
    Connection admin() throws SQLException {
        return DriverManager.getConnection(ADMIN_URL);
    }

    @Override
    void killSession(Connection admin, long sessionId) throws SQLException {
        try (Statement st = admin.createStatement()) {
            st.execute("KILL CONNECTION " + sessionId);
        } catch (SQLException e) {
            if (e.getErrorCode() != 1094) { // unknown thread id: that session had already ended
                throw e;
            }
        }
    }

    @Override
    int countLive(Connection admin, java.util.List<Long> ids) throws SQLException {
        if (ids.isEmpty()) {
            return 0;
        }
        String in = String.join(",", ids.stream().map(String::valueOf).toList()); // server-issued numbers
        try (Statement st = admin.createStatement();
             var rs = st.executeQuery("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID IN (" + in + ")")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Override
    String expireSql() {
        return "UPDATE " + table() + " SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 MICROSECOND WHERE name = ?";
    }
}
