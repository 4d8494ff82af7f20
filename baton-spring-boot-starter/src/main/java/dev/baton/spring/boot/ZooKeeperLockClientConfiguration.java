package dev.baton.spring.boot;

import dev.baton.LockClient;
import dev.baton.LockConfigurationException;
import dev.baton.LockObserver;
import dev.baton.zookeeper.ZooKeeperLockClient;
import dev.baton.zookeeper.ZooKeeperLocks;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * The ZooKeeper lock client: over {@code baton.zookeeper.connect-string}, else the application's {@link
 * CuratorFramework}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ZooKeeperLocks.class, CuratorFramework.class})
@Conditional({BatonAutoConfiguration.Backend.ZooKeeper.class, ZooKeeperLockClientConfiguration.Source.class})
class ZooKeeperLockClientConfiguration {
    /** Declared before {@link #batonLockClient}, which it builds: both only where the application has no client. */
    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    BatonClients batonClients(BatonProperties p, ObjectProvider<CuratorFramework> curators,
                              ObjectProvider<LockObserver> observers) {
        BatonProperties.Zookeeper zk = p.getZookeeper();
        return BatonClients.refusing(leaseTime -> {
            ZooKeeperLocks.Builder b;
            if (zk.getConnectString() != null && !zk.getConnectString().isBlank()) {
                b = ZooKeeperLocks.builder(zk.getConnectString());
            } else {
                CuratorFramework curator = curators.getIfUnique();
                if (curator == null) {
                    throw new LockConfigurationException("baton.backend=zookeeper needs"
                            + " baton.zookeeper.connect-string or one CuratorFramework bean");
                }
                b = ZooKeeperLocks.builder(curator);
            }
            BatonAutoConfiguration.common(b, p, observers);
            if (zk.getRootPath() != null) {
                b.rootPath(zk.getRootPath());
            }
            return b.build();
        }, "ZooKeeper holds a lock as long as the client's ZooKeeper session lives (an ephemeral node), with no"
                + " lease time of its own, and all of a client's locks share its one session");
    }

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    ZooKeeperLockClient batonLockClient(BatonClients clients) {
        return (ZooKeeperLockClient) clients.main();
    }

    /** Something to build a ZooKeeper client from. */
    static class Source extends AnyNestedCondition {
        Source() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(prefix = "baton.zookeeper", name = "connect-string")
        static class ConnectString {
        }

        @ConditionalOnBean(CuratorFramework.class)
        static class Curator {
        }
    }
}
