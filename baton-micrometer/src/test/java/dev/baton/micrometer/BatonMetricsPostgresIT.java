package dev.baton.micrometer;

import dev.baton.Lease;
import dev.baton.LockTimeoutException;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.testkit.TestServers;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The meters over a real server: the JDBC lease strategy on the tests' PostgreSQL. */
class BatonMetricsPostgresIT {
    private static final String BACKEND = "jdbc-lease/postgresql";

    @Test
    void theMetersOfAGrantATimeoutARenewalAndAReleaseOnPostgres() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        BatonMetrics metrics = BatonMetrics.builder(registry).build();
        try (JdbcLockClient a = JdbcLocks.builder(ds).tableName("baton_metrics_it").createTableIfMissing()
                .leaseTime(Duration.ofSeconds(1)).observer(metrics).build();
             JdbcLockClient b = JdbcLocks.builder(ds).tableName("baton_metrics_it").observer(metrics).build()) {
            try (Lease ignored = a.lock("metrics-pg").acquire(Duration.ofSeconds(5))) {
                assertThat(registry.get(BatonMetrics.LEASES_HELD).tags("backend", BACKEND, "lock", "metrics-pg")
                        .gauge().value()).isEqualTo(1);
                assertThatThrownBy(() -> b.lock("metrics-pg").acquire(Duration.ofMillis(100)))
                        .isInstanceOf(LockTimeoutException.class);
                await().atMost(Duration.ofSeconds(5)).until(() -> registry.find(BatonMetrics.RENEWALS)
                        .tags("backend", BACKEND, "result", "ok").counter() != null);
            }
            assertThat(registry.get(BatonMetrics.ACQUIRE).tags("backend", BACKEND, "lock", "metrics-pg",
                    "outcome", "granted").timer().count()).isEqualTo(1);
            assertThat(registry.get(BatonMetrics.ACQUIRE).tags("backend", BACKEND, "lock", "metrics-pg",
                    "outcome", "timeout").timer().count()).isEqualTo(1);
            assertThat(registry.get(BatonMetrics.ACQUIRE_WAIT).tags("backend", BACKEND, "outcome", "timeout")
                    .timer().count()).isEqualTo(1);
            assertThat(registry.get(BatonMetrics.LEASES_HELD).tags("backend", BACKEND, "lock", "metrics-pg")
                    .gauge().value()).isZero();
            assertThat(registry.get(BatonMetrics.LEASE_DURATION).tags("backend", BACKEND, "lost", "false")
                    .timer().count()).isEqualTo(1);
        }
    }
}
