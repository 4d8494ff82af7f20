package example;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.memory.InMemoryLockServer;
import dev.baton.memory.InMemoryLocks;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.TestServers;
import dev.baton.zookeeper.ZooKeeperLocks;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A user's application that imports only baton-bom and uses every backend module: one JVM holds a lock on
 * PostgreSQL, Redis, ZooKeeper and in memory at the same time. Without the BOM's Netty the Redis client's build()
 * fails with NoClassDefFoundError io/netty/channel/epoll/EpollIoHandler (see ../without-bom).
 */
class AllModulesTogetherTest {

    @Test
    void holdsALockOnEveryBackendInOneJvm() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        TestServers.requireRedis();
        TestServers.requireZooKeeper();
        String name = "bom-it-" + UUID.randomUUID();
        Duration wait = Duration.ofSeconds(10);

        PGSimpleDataSource postgres = new PGSimpleDataSource();
        postgres.setUrl("jdbc:postgresql://127.0.0.1:5432/test");
        postgres.setUser("postgres");

        try (LockClient jdbc = JdbcLocks.builder(postgres).tableName("baton_bom_it").createTableIfMissing().build();
             LockClient redis = RedisLocks.builder("redis://127.0.0.1:6379").keyPrefix("baton-bom-it:").build();
             LockClient zookeeper = ZooKeeperLocks.builder("127.0.0.1:2181").rootPath("/baton-bom-it").build();
             LockClient memory = InMemoryLocks.builder(InMemoryLockServer.create()).build();
             Lease onPostgres = jdbc.lock(name).acquire(wait);
             Lease onRedis = redis.lock(name).acquire(wait);
             Lease onZooKeeper = zookeeper.lock(name).acquire(wait);
             Lease inMemory = memory.lock(name).acquire(wait)) {
            for (Lease lease : new Lease[] {onPostgres, onRedis, onZooKeeper, inMemory}) {
                lease.checkValid();                                   // asks its server
                assertTrue(lease.fencingToken() > 0, "fencing token " + lease.fencingToken());
            }
        }
    }
}
