package dev.baton.jdbc;

/** The session strategy through {@link PostgresFixture}'s server. */
public final class PostgresSessionFixture extends PostgresFixture {
    @Override
    public String name() {
        return "postgresql-session";
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
