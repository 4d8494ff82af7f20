package dev.baton.jdbc.session;

import dev.baton.jdbc.fixtures.MariaDbSessionFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.SessionContract;

/** The contract ladder for the session strategy, climbed to its session rung. */
class MariaDbSessionIT extends SessionContract {
    @Override
    protected LockFixture createFixture() {
        return new MariaDbSessionFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return MariaDbSessionFixture.class;
    }
}
