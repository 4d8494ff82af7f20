package dev.baton.jdbc.session;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.LockException;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import dev.baton.jdbc.fixtures.PgBouncerFixture;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.postgresql.ds.PGSimpleDataSource;


import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The session strategy through the real PgBouncer in transaction mode (scripts/start-servers.sh, :6432), with
 * the URL a user writes — no {@code prepareThreshold=0}: the refusal must name the pooler, never surface the
 * driver's raw {@code prepared statement "S_n" already exists} (42P05).
 */
@ResourceLock(PgBouncerFixture.POOL_LOCK) // PgBouncer's five server sessions (see PgBouncerFixture.POOL_LOCK)
class PgBouncerSessionIT {
    private static final String TABLE = "baton_bouncer_s";
    private static final String URL = "jdbc:postgresql://127.0.0.1:6432/test?user=postgres";

    private static void createTablesDirectly() {
        PGSimpleDataSource direct = new PGSimpleDataSource();
        direct.setURL(PostgresFixture.ADMIN_URL);
        JdbcLocks.builder(direct).tableName(TABLE).strategy(Strategy.SESSION).createTableIfMissing().build().close();
    }

    @Test
    void theSessionStrategyRefusesAPoolerInTransactionModeWhateverTheUrlSays() throws Exception {
        TestServers.require("PgBouncer (transaction mode, in front of PostgreSQL)", "127.0.0.1", 6432);
        createTablesDirectly();
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(URL);
        hc.setMaximumPoolSize(4);
        hc.setMinimumIdle(0);
        hc.setConnectionTimeout(3000);
        try (HikariDataSource pool = new HikariDataSource(hc)) {
            // repeated builds: each leaves pgjdbc's named statements (BEGIN/ROLLBACK of the pooler check) on
            // PgBouncer's shared server connections, where the next build's statements clash with them
            for (int attempt = 0; attempt < 10; attempt++) {
                assertThatThrownBy(() -> JdbcLocks.builder(pool).tableName(TABLE).strategy(Strategy.SESSION).build())
                        .as("build %d through PgBouncer", attempt)
                        .isInstanceOf(LockException.class)
                        .isInstanceOf(dev.baton.UnsupportedBackendException.class)
                        .hasMessageContaining("pooler in transaction")
                        .hasMessageContaining("lease strategy");
            }
        }
        PGSimpleDataSource plain = new PGSimpleDataSource();
        plain.setURL(URL);
        for (int attempt = 0; attempt < 10; attempt++) {
            assertThatThrownBy(() -> JdbcLocks.builder(plain).tableName(TABLE).strategy(Strategy.SESSION).build())
                    .as("build %d through PgBouncer without a pool", attempt)
                    .isInstanceOf(LockException.class)
                    .isInstanceOf(dev.baton.UnsupportedBackendException.class)
                    .hasMessageContaining("pooler in transaction");
        }
    }
}
