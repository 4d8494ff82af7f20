package dev.baton.redis;

import dev.baton.LockBackendException;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A {@code build()} that cannot connect gives back everything it created: the client and its own
 * {@code ClientResources} (event executors, timer), else each failed build leaks Lettuce's threads. No server:
 * the port is one nothing listens on.
 */
class RedisFailedBuildTest {

    private static long lettuceThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("lettuce-")).count();
    }

    @Test
    void aBuildThatCannotConnectLeavesNoLettuceThreadsBehind() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // free once closed: a connection to it is refused
        }
        long before = lettuceThreads();
        for (int i = 0; i < 3; i++) {
            RedisLocks.Builder b = RedisLocks.builder("redis://127.0.0.1:" + port)
                    .commandTimeout(Duration.ofSeconds(2));
            assertThatThrownBy(b::build).isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("cannot connect to Redis");
        }
        await("Lettuce threads of the failed builds end").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20)).until(() -> lettuceThreads() <= before);
    }
}
