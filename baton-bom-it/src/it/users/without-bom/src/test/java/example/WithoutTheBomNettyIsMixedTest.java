package example;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.baton.redis.RedisLocks;
import io.netty.util.Version;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The control for all-modules: baton-redis and baton-zookeeper without baton-bom get two Netty versions (Lettuce's
 * 4.2, ZooKeeper's 4.1 epoll transport), and the Redis client fails as users' applications did. If this test fails,
 * that failure no longer happens without the BOM, and all-modules no longer shows what the BOM's Netty fixes.
 */
class WithoutTheBomNettyIsMixedTest {

    @Test
    void redisClientFailsOnZooKeepersOlderNettyEpoll() {
        Map<String, String> versions = new TreeMap<>();
        Version.identify().forEach((artifact, version) -> versions.put(artifact, version.artifactVersion()));
        assertTrue(new TreeSet<>(versions.values()).size() > 1,
                "without the BOM the Netty jars were expected to disagree, but they are all at one version: " + versions);

        NoClassDefFoundError e = assertThrows(NoClassDefFoundError.class,
                () -> RedisLocks.builder("redis://127.0.0.1:6379").keyPrefix("baton-bom-it:").build().close(),
                "the Redis client built without the BOM's Netty; Netty jars on the class path: " + versions);
        assertTrue(e.getMessage().contains("io/netty/channel/epoll/EpollIoHandler"), e.toString());
    }
}
