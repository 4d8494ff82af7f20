package dev.baton.jdbc.session;

import dev.baton.jdbc.fixtures.PostgresSessionFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.SessionContract;

/** The contract ladder for the session strategy, climbed to its session rung. */
class PostgresSessionIT extends SessionContract {
    @Override
    protected LockFixture createFixture() {
        return new PostgresSessionFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return PostgresSessionFixture.class;
    }
}
