package dev.baton.spring.boot;

import dev.baton.LockClient;
import dev.baton.LockObserver;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.function.Function;

/** The JDBC lock client, over the application's one {@link DataSource}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(JdbcLocks.class)
@ConditionalOnSingleCandidate(DataSource.class)
@Conditional(BatonAutoConfiguration.Backend.Jdbc.class)
class JdbcLockClientConfiguration {
    /** Declared before {@link #batonLockClient}, which it builds: both only where the application has no client. */
    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    BatonClients batonClients(DataSource dataSource, BatonProperties p, ObjectProvider<LockObserver> observers) {
        BatonProperties.Jdbc jdbc = p.getJdbc();
        Function<Duration, LockClient> build = leaseTime -> {
            JdbcLocks.Builder b = BatonAutoConfiguration.common(JdbcLocks.builder(dataSource), p, observers, leaseTime)
                    .strategy(jdbc.getStrategy()).tableName(jdbc.getTable());
            if (jdbc.isCreateTable()) {
                b.createTableIfMissing();
            }
            if (jdbc.isAllowUnflushedCommits()) {
                b.allowUnflushedCommits();
            }
            return b.build();
        };
        return jdbc.getStrategy() == Strategy.SESSION
                ? BatonClients.refusing(build, "the jdbc session strategy (baton.jdbc.strategy=session) holds a lock"
                + " as long as the client's database session lives, with no lease time")
                : BatonClients.of(build, p.getLeaseTime());
    }

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    JdbcLockClient batonLockClient(BatonClients clients) {
        return (JdbcLockClient) clients.main();
    }
}
