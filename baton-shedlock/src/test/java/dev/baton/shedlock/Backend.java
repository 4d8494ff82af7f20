package dev.baton.shedlock;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.LockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.memory.InMemoryLockServer;
import dev.baton.memory.InMemoryLocks;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.TestServers;
import dev.baton.zookeeper.ZooKeeperLocks;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * One backend for the suite: {@link #client} under the provider, {@link #observer} a second client (another
 * "process") for the checks. Names are isolated per run (own table, key prefix or root path), since ShedLock's
 * suite uses fixed lock names.
 */
final class Backend implements AutoCloseable {
    /** Short, so the suite shows that lockAtLeastFor and renewal outlive a lease. */
    static final Duration LEASE = Duration.ofSeconds(1);

    final LockClient client;
    final LockClient observer;
    final BatonLockProvider provider;
    private final Runnable cleanup;

    private Backend(Supplier<LockClient> clients, Runnable cleanup) {
        this.client = clients.get();
        this.observer = clients.get();
        this.provider = new BatonLockProvider(client);
        this.cleanup = cleanup;
    }

    private static String unique() {
        return "shedlock_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    static Backend inMemory() {
        InMemoryLockServer server = InMemoryLockServer.create();
        return new Backend(() -> InMemoryLocks.builder(server).leaseTime(LEASE).build(), () -> { });
    }

    static Backend postgres() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        return jdbc("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
    }

    static Backend mariaDb() {
        TestServers.require("MariaDB", "127.0.0.1", 3306);
        return jdbc("jdbc:mariadb://127.0.0.1:3306/test?user=root");
    }

    private static Backend jdbc(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(12);
        HikariDataSource ds = new HikariDataSource(config);
        String table = unique();
        return new Backend(() -> JdbcLocks.builder(ds).tableName(table).createTableIfMissing().leaseTime(LEASE).build(),
                () -> {
                    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
                        for (String suffix : new String[] {"", "_rw", "_queue", "_released", "_names"}) {
                            st.execute("DROP TABLE IF EXISTS " + table + suffix);
                        }
                        st.execute("DROP SEQUENCE IF EXISTS " + table + "_token_seq");
                    } catch (SQLException e) {
                        throw new IllegalStateException("could not drop the test table " + table, e);
                    } finally {
                        ds.close();
                    }
                });
    }

    static Backend redis() {
        TestServers.requireRedis();
        String prefix = unique() + ":";
        return new Backend(() -> RedisLocks.builder("redis://127.0.0.1:6379").keyPrefix(prefix)
                .tokenCounterExpiry(Duration.ofHours(1)).leaseTime(LEASE).build(), () -> { });
    }

    static Backend zooKeeper() {
        TestServers.requireZooKeeper();
        String root = "/" + unique();
        return new Backend(() -> ZooKeeperLocks.builder("127.0.0.1:2181").rootPath(root).leaseTime(LEASE).build(),
                () -> {
                    try (CuratorFramework curator = CuratorFrameworkFactory.newClient("127.0.0.1:2181",
                            new RetryOneTime(100))) {
                        curator.start();
                        curator.delete().deletingChildrenIfNeeded().forPath(root);
                    } catch (Exception e) {
                        throw new IllegalStateException("could not delete the test's ZooKeeper nodes under " + root, e);
                    }
                });
    }

    @Override
    public void close() {
        try {
            provider.close();
            client.close();
            observer.close();
        } finally {
            cleanup.run();
        }
    }
}
