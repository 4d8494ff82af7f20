package dev.baton.redis;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in for the testkit's {@code OwnServer} (REDIS only, same API) until it lands on main: delete this file
 * and import {@code dev.baton.testkit.OwnServer} in {@link RedisServerSettingsIT}. A redis-server of the test's own
 * on a free port, without persistence; stopped (by its own process handle) and its directory deleted at close.
 */
public final class OwnServer implements AutoCloseable {
    public enum Engine { REDIS }

    private final int port;
    private final Path dir;
    private final List<String> extra;
    private Process process;

    private OwnServer(int port, Path dir, List<String> extra) {
        this.port = port;
        this.dir = dir;
        this.extra = extra;
    }

    public static OwnServer start(Engine engine, String... options) {
        try (ServerSocket s = new ServerSocket(0)) {
            OwnServer o = new OwnServer(s.getLocalPort(), Files.createTempDirectory("own-redis"), List.of(options));
            s.close();
            o.start();
            return o;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public void start() {
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString()));
        cmd.addAll(extra);
        try {
            process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("log").toFile())
                    .start();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < end) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    return;
                } catch (IOException e) {
                    Thread.sleep(50);
                }
            }
            throw new IllegalStateException("own redis did not start: " + Files.readString(dir.resolve("log")));
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    public String host() {
        return "127.0.0.1";
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    public void stop() {
        process.destroy();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
        try (var s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }
}
