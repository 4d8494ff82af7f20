package dev.baton.jdbc.lease;

import dev.baton.jdbc.fixtures.PgBouncerFixture;
import dev.baton.testkit.FairLeaseContract;
import dev.baton.testkit.LockFixture;
import org.junit.jupiter.api.parallel.ResourceLock;

/** The whole contract ladder for the lease strategy through the real PgBouncer in transaction mode. */
@ResourceLock(PgBouncerFixture.POOL_LOCK) // PgBouncer's five server sessions (see PgBouncerFixture.POOL_LOCK)
class PgBouncerLeaseIT extends FairLeaseContract {
    @Override
    protected LockFixture createFixture() {
        return new PgBouncerFixture();
    }

    @Override
    protected Class<? extends LockFixture> fixtureClass() {
        return PgBouncerFixture.class;
    }
}
