package dev.baton.jdbc.session;

import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.testkit.TestServers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** {@link SessionHardeningTests} on PostgreSQL. */
class PostgresSessionHardeningIT extends SessionHardeningTests {
    PostgresSessionHardeningIT() {
        TestServers.require("PostgreSQL", PostgresFixture.HOST, PostgresFixture.PORT);
    }

    @Override
    String url() {
        return PostgresFixture.ADMIN_URL;
    }

    @Override
    Dialect dialect() {
        return Dialect.POSTGRESQL;
    }

    @Override
    String shortIdleTimeoutSql() {
        return "SET idle_session_timeout = '1s'";
    }

    @Override
    Connection admin() throws SQLException {
        return DriverManager.getConnection(PostgresFixture.ADMIN_URL);
    }

    @Override
    String urlVia(int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/test?user=postgres";
    }

    @Override
    int serverPort() {
        return PostgresFixture.PORT;
    }
}
