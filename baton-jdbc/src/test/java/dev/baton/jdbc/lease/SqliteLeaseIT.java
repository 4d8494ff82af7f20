package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.SqliteFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;
import org.junit.jupiter.api.parallel.ResourceLock;

/** The whole contract ladder for the lease strategy on Sqlite. */
@ResourceLock(SqliteFixture.FILE_LOCK) // its cut-off test holds the file's write lock (see SqliteFixture.FILE_LOCK)
class SqliteLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new SqliteFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return SqliteFixture.class;
    }
}
