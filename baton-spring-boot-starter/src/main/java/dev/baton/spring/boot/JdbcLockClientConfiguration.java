package dev.baton.spring.boot;

import dev.baton.LockClient;
import dev.baton.LockObserver;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;

/** The JDBC lock client, over the application's one {@link DataSource}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(JdbcLocks.class)
@ConditionalOnSingleCandidate(DataSource.class)
@Conditional(BatonAutoConfiguration.Backend.Jdbc.class)
class JdbcLockClientConfiguration {
    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    JdbcLockClient batonLockClient(DataSource dataSource, BatonProperties p,
                                   ObjectProvider<LockObserver> observers) {
        BatonProperties.Jdbc jdbc = p.getJdbc();
        JdbcLocks.Builder b = BatonAutoConfiguration.common(JdbcLocks.builder(dataSource), p, observers)
                .strategy(jdbc.getStrategy()).tableName(jdbc.getTable());
        if (jdbc.isCreateTable()) {
            b.createTableIfMissing();
        }
        if (jdbc.isAllowUnflushedCommits()) {
            b.allowUnflushedCommits();
        }
        return b.build();
    }
}
