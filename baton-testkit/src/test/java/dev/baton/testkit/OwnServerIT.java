package dev.baton.testkit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The own servers of {@link OwnServer}: their own port and data, restartable, gone when closed. */
class OwnServerIT {
    @TempDir
    Path tmp;

    private static String redis(int port, String command) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write((command + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c >= 0 && c != '\n'; c = in.read()) {
                line.append((char) c);
            }
            return line.toString().strip();
        }
    }

    @Test
    void anOwnRedisRunsOnItsOwnPortWithItsOptionsAndSurvivesACrashAndAStart() throws Exception {
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS, "--maxmemory-policy", "allkeys-lru")) {
            assertThat(redis.port()).isNotEqualTo(TestServers.REDIS_PORT);
            assertThat(redis.url()).isEqualTo("redis://127.0.0.1:" + redis.port());
            assertThat(redis(redis.port(), "PING")).isEqualTo("+PONG");
            assertThat(redis(redis.port(), "INFO memory")).startsWith("$");
            assertThat(redis(redis.port(), "CONFIG GET maxmemory-policy")).isEqualTo("*2");
            redis.crash();
            assertThat(TestServersProbe.accepts(redis.port())).isFalse();
            redis.start();
            assertThat(redis(redis.port(), "PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void aClosedOwnServerIsGoneWithItsData() {
        OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS);
        int port = redis.port();
        redis.close();
        assertThat(TestServersProbe.accepts(port)).isFalse();
        redis.close(); // idempotent
    }

    /**
     * Seen: a ZooKeeper and a PgBouncer started in the background by scripts/start-servers.sh under flock(1) kept
     * the caller's lock held after the script exited (they had inherited its descriptor). A server started by the
     * scripts keeps none of its caller's descriptors.
     */
    @Test
    void aServerStartedUnderFlockDoesNotKeepTheCallersLock() throws Exception {
        Path lock = tmp.resolve("lock");
        Files.createFile(lock);
        Path dir = tmp.resolve("redis");
        Path root = OwnServer.repositoryRoot();
        try {
            Process start = new ProcessBuilder("flock", lock.toString(), "bash", root.resolve(OwnServer.SCRIPT).toString(),
                    "start", "redis", dir.toString()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            assertThat(start.waitFor(60, TimeUnit.SECONDS)).as("own-server.sh start returned").isTrue();
            assertThat(start.exitValue()).isZero();
            Process probe = new ProcessBuilder("flock", "-n", lock.toString(), "true").start();
            assertThat(probe.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(probe.exitValue()).as("flock -n on the caller's lock file after the script exited, its server"
                    + " still running (1: the server kept the lock)").isZero();
        } finally {
            new ProcessBuilder("bash", root.resolve(OwnServer.SCRIPT).toString(), "destroy", dir.toString())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(60, TimeUnit.SECONDS);
        }
    }

    /** Whether something listens on a loopback port. */
    static final class TestServersProbe {
        static boolean accepts(int port) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return true;
            } catch (IOException e) {
                return false;
            }
        }
    }
}
