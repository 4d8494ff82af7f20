package dev.baton.jdbc;

/** The session strategy through {@link MySqlDialectOnMariaDbFixture}'s server. */
public final class MySqlDialectSessionOnMariaDbFixture extends MySqlDialectOnMariaDbFixture {
    @Override
    public String name() {
        return "mysql-dialect-session-on-mariadb";
    }

    @Override
    String table() {
        return "baton_contract_mys";
    }

    @Override
    Strategy strategy() {
        return Strategy.SESSION;
    }

    @Override
    public boolean notifiesWaiters() {
        return true; // waiters block on the server, which grants the lock the moment it is released
    }
}
