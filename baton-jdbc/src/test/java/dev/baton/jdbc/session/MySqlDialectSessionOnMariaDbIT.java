package dev.baton.jdbc.session;

import dev.baton.jdbc.fixtures.MySqlDialectSessionOnMariaDbFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.SessionContract;

/** The contract ladder for the session strategy, climbed to its session rung. */
class MySqlDialectSessionOnMariaDbIT extends SessionContract {
    @Override
    protected LockFixture createFixture() {
        return new MySqlDialectSessionOnMariaDbFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return MySqlDialectSessionOnMariaDbFixture.class;
    }
}
