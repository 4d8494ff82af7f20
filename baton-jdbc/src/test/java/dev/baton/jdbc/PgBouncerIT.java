package dev.baton.jdbc;

import dev.baton.Lease;
import dev.baton.LockException;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Through a real PgBouncer in transaction mode (started by scripts/start-servers.sh on :6432): session
 * locks would be silently broken there, so the session strategy refuses it; the lease strategy works.
 */
class PgBouncerIT {
    private static PGSimpleDataSource viaPgBouncer() {
        TestServers.require("PgBouncer (transaction mode, in front of PostgreSQL)", "127.0.0.1", 6432);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        // prepareThreshold=0: named server-side statements do not survive transaction pooling
        ds.setURL("jdbc:postgresql://127.0.0.1:6432/test?user=postgres&prepareThreshold=0");
        return ds;
    }

    @Test
    void theSessionStrategyRefusesAPoolerInTransactionMode() {
        // the tables exist already: create them directly, as an operator would with the shipped DDL
        PGSimpleDataSource direct = new PGSimpleDataSource();
        direct.setURL(PostgresFixture.ADMIN_URL);
        JdbcLocks.builder(direct).tableName("baton_bouncer").strategy(Strategy.SESSION).createTableIfMissing()
                .build().close();
        assertThatThrownBy(() -> JdbcLocks.builder(viaPgBouncer()).tableName("baton_bouncer")
                .strategy(Strategy.SESSION).build())
                .isInstanceOf(LockException.class)
                .hasMessageContaining("pooler in transaction")
                .hasMessageContaining("lease strategy");
    }

    @Test
    void theLeaseStrategyWorksThroughIt() {
        try (JdbcLockClient locks = JdbcLocks.builder(viaPgBouncer()).tableName("baton_bouncer")
                .createTableIfMissing().build(); JdbcLockClient other = JdbcLocks.builder(viaPgBouncer())
                .tableName("baton_bouncer").build()) {
            String name = "bouncer-" + System.nanoTime();
            try (Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(other.lock(name).tryAcquire()).isEmpty();
                assertThat(lease.isValid()).isTrue();
            }
            assertThat(other.lock(name).tryAcquire()).isPresent().get().satisfies(Lease::close);
        }
    }
}
