package dev.baton.jdbc.session;

import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.fixtures.MariaDbFixture;
import dev.baton.testkit.TestServers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** {@link SessionHardeningTests} on MariaDB. */
class MariaDbSessionHardeningIT extends SessionHardeningTests {
    MariaDbSessionHardeningIT() {
        TestServers.require("MariaDB", MariaDbFixture.HOST, MariaDbFixture.PORT);
    }

    @Override
    String url() {
        return MariaDbFixture.ADMIN_URL;
    }

    @Override
    Dialect dialect() {
        return Dialect.MARIADB;
    }

    @Override
    String shortIdleTimeoutSql() {
        return "SET SESSION wait_timeout = 1";
    }

    @Override
    Connection admin() throws SQLException {
        return DriverManager.getConnection(MariaDbFixture.ADMIN_URL);
    }

    @Override
    String urlVia(int port) {
        return "jdbc:mariadb://127.0.0.1:" + port + "/test?user=root";
    }

    @Override
    int serverPort() {
        return MariaDbFixture.PORT;
    }
}
