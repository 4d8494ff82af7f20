package dev.baton.jdbc;

/** The session strategy through {@link MariaDbFixture}'s server. */
public final class MariaDbSessionFixture extends MariaDbFixture {
    @Override
    public String name() {
        return "mariadb-session";
    }

    @Override
    String table() {
        return "baton_contract_s";
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
