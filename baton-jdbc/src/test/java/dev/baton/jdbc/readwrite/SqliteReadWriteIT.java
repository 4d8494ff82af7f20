package dev.baton.jdbc.readwrite;

import dev.baton.jdbc.fixtures.SqliteFixture;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;
import org.junit.jupiter.api.parallel.ResourceLock;

/** The read-write rung on the {@link SqliteFixture}'s strategy and server. */
@ResourceLock(SqliteFixture.FILE_LOCK) // a cut-off in another class cuts this one off too (see there)
class SqliteReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new SqliteFixture();
    }
}
