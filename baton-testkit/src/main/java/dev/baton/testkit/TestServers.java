package dev.baton.testkit;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/** Checks that a test server is up, and fails loudly (never skips) when it is not. */
public final class TestServers {
    /** The script that starts every server the tests need. */
    public static final String START_SCRIPT = "scripts/start-servers.sh";

    /** Where the tests' Redis listens (started by {@link #START_SCRIPT} without persistence). */
    public static final String REDIS_HOST = "127.0.0.1";
    public static final int REDIS_PORT = 6379;

    /** Where the tests' ZooKeeper listens (started by {@link #START_SCRIPT} as its own JVM, data on disk). */
    public static final String ZOOKEEPER_HOST = "127.0.0.1";
    public static final int ZOOKEEPER_PORT = 2181;

    private TestServers() {
    }

    /** Fails with a message naming Redis and {@link #START_SCRIPT} if the tests' Redis is down. */
    public static void requireRedis() {
        require("Redis", REDIS_HOST, REDIS_PORT);
    }

    /** Fails with a message naming ZooKeeper and {@link #START_SCRIPT} if the tests' ZooKeeper is down. */
    public static void requireZooKeeper() {
        require("ZooKeeper", ZOOKEEPER_HOST, ZOOKEEPER_PORT);
    }

    /**
     * Fails with a message naming the server and the script that starts it if nothing listens at host:port.
     */
    public static void require(String server, String host, int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 2000);
        } catch (IOException e) {
            throw new AssertionError(server + " is not reachable at " + host + ":" + port + " (" + e.getMessage()
                    + "). Start it with " + START_SCRIPT + " from the repository root; these tests need the real"
                    + " server and are never skipped.", e);
        }
    }
}
