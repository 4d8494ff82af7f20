package dev.baton.testkit;

import dev.baton.LockClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The bottom rung: owns the fixture for the test class. Backends extend the top rung of the ladder and
 * supply {@link #createFixture()} (and the fixture class, so a child JVM can rebuild it).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ContractBase {
    protected LockFixture fixture;

    /** A fresh fixture bound to the backend's real server. */
    protected abstract LockFixture createFixture();

    @BeforeAll
    void openFixture() {
        fixture = createFixture();
    }

    @AfterAll
    void closeFixture() {
        if (fixture != null) {
            fixture.close();
        }
    }

    /** A client with the default test configuration. */
    protected LockClient client() {
        return fixture.newClient(ClientConfig.defaults());
    }

    /** A lock name unique to this run, so tests never see each other's rows. */
    protected static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }
}
