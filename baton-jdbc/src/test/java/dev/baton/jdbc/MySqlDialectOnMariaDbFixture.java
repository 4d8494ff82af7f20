package dev.baton.jdbc;

/**
 * The MYSQL dialect (counter row + LAST_INSERT_ID, no RETURNING, no sequences) run on the MariaDB server,
 * which speaks every statement it uses: the closest this machine gets to MySQL 8.
 */
public class MySqlDialectOnMariaDbFixture extends MariaDbFixture {
    @Override
    public String name() {
        return "mysql-dialect-on-mariadb";
    }

    @Override
    String table() {
        return "baton_contract_my";
    }

    @Override
    Dialect forcedDialect() {
        return Dialect.MYSQL;
    }
}
