package dev.baton.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A test server of its own: PostgreSQL, MariaDB, Redis, Redis Sentinel or ZooKeeper on a free port of its own with its data in a
 * directory of its own, for every test that restarts, kills, pauses, reconfigures or flushes a server. The servers
 * of {@link TestServers#START_SCRIPT} (the ones a developer already runs) are never touched.
 *
 * <p>{@link #start} runs {@value #SCRIPT} (which the checker's users can run too). {@link #close()} kills the server
 * and deletes its data; a JVM that ends without closing it kills it in a shutdown hook, and a JVM killed outright
 * leaves it until the next own server starts (the script destroys the servers whose owner process is gone).
 *
 * <p>Not thread-safe: one test drives one server.
 */
public final class OwnServer implements AutoCloseable {
    /** The script that creates, starts, stops and destroys own servers. */
    public static final String SCRIPT = "scripts/own-server.sh";
    private static final Path ROOT = Path.of("/tmp/baton-own-servers");
    private static final long TIMEOUT_SECONDS = 180;
    private static final Set<OwnServer> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(OwnServer::close), "own-servers-close"));
    }

    /** The engines an own server can run. */
    public enum Engine {
        /** Options: {@code "-c", "name=value"} pairs, written to its {@code postgresql.conf}. */
        POSTGRESQL,
        /** Options: {@code mariadbd} options ({@code "--innodb-flush-log-at-trx-commit=0"}). */
        MARIADB,
        /** Options: {@code redis-server} options ({@code "--maxmemory-policy", "allkeys-lru"}), as in its config file. */
        REDIS,
        /**
         * A Redis Sentinel. Options as for {@link #REDIS}, its {@code sentinel} directives among them
         * ({@code "--sentinel", "monitor", "mymaster", "127.0.0.1", "6390", "2"}).
         */
        SENTINEL,
        /** Options: {@code key=value} lines of its {@code zoo.cfg}. */
        ZOOKEEPER
    }

    private final Engine engine;
    private final Path dir;
    private final int port;
    private final int jmxPort;

    private OwnServer(Engine engine, Path dir, int port, int jmxPort) {
        this.engine = engine;
        this.dir = dir;
        this.port = port;
        this.jmxPort = jmxPort;
    }

    /**
     * Creates and starts a server of this engine with these options; returns once it accepts connections (for the
     * SQL engines: once database {@code test} exists).
     *
     * @throws AssertionError naming {@value #SCRIPT} and its output if the server did not start
     */
    public static OwnServer start(Engine engine, String... options) {
        Path dir;
        try {
            Files.createDirectories(ROOT);
            dir = Files.createTempDirectory(ROOT, engine.name().toLowerCase(Locale.ROOT) + "-");
        } catch (IOException e) {
            throw new AssertionError("cannot create a directory under " + ROOT + " for an own " + engine, e);
        }
        List<String> args = new ArrayList<>(List.of("start", engine.name().toLowerCase(Locale.ROOT), dir.toString()));
        args.addAll(List.of(options));
        String out;
        try {
            out = run(args);
        } catch (AssertionError e) {
            runQuietly("destroy", dir);
            throw e;
        }
        OwnServer s = new OwnServer(engine, dir, field(out, "port"), out.contains("jmx-port ") ? field(out, "jmx-port") : -1);
        OPEN.add(s);
        return s;
    }

    public Engine engine() {
        return engine;
    }

    public String host() {
        return "127.0.0.1";
    }

    public int port() {
        return port;
    }

    /**
     * The server's JMX port (ZooKeeper only: the checker's session-kill ends sessions through it).
     *
     * @throws IllegalStateException for an engine other than ZooKeeper
     */
    public int jmxPort() {
        if (jmxPort < 0) {
            throw new IllegalStateException("an own " + engine + " has no JMX port");
        }
        return jmxPort;
    }

    /**
     * The URL Baton's CLI and checker take for this server: {@code jdbc:postgresql://127.0.0.1:P/test?user=postgres},
     * {@code jdbc:mariadb://127.0.0.1:P/test?user=root}, {@code redis://127.0.0.1:P},
     * {@code redis-sentinel://127.0.0.1:P} (to which a Sentinel URL adds the other Sentinels and {@code #master}) or
     * {@code zookeeper://127.0.0.1:P}.
     */
    public String url() {
        return switch (engine) {
            case POSTGRESQL -> "jdbc:postgresql://127.0.0.1:" + port + "/test?user=postgres";
            case MARIADB -> "jdbc:mariadb://127.0.0.1:" + port + "/test?user=root";
            case REDIS -> "redis://127.0.0.1:" + port;
            case SENTINEL -> "redis-sentinel://127.0.0.1:" + port;
            case ZOOKEEPER -> "zookeeper://127.0.0.1:" + port;
        };
    }

    /** A clean stop (PostgreSQL: {@code pg_ctl stop -m fast}; others: SIGTERM); returns once the port is closed. */
    public void stop() {
        run(List.of("stop", dir.toString()));
    }

    /** A crash: SIGKILL (PostgreSQL: {@code pg_ctl stop -m immediate}); returns once the port is closed. */
    public void crash() {
        run(List.of("crash", dir.toString()));
    }

    /** Starts the stopped server again: same port, data and options. */
    public void start() {
        run(List.of("start", engine.name().toLowerCase(Locale.ROOT), dir.toString()));
    }

    /** {@link #stop()} then {@link #start()}. */
    public void restart() {
        stop();
        start();
    }

    /** Kills the server if it runs and deletes its data directory. Idempotent. */
    @Override
    public void close() {
        if (OPEN.remove(this)) {
            runQuietly("destroy", dir);
        }
    }

    @Override
    public String toString() {
        return "own " + engine + " at 127.0.0.1:" + port + " (" + dir + ")";
    }

    private static int field(String out, String name) {
        for (String line : out.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Integer.parseInt(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(SCRIPT + " printed no '" + name + " N' line: " + out);
    }

    private static void runQuietly(String command, Path dir) {
        try {
            run(List.of(command, dir.toString()));
        } catch (AssertionError e) {
            System.err.println(e.getMessage());
        }
    }

    /** Runs the script; its output goes to a file, never a pipe a server it starts could keep open. */
    private static String run(List<String> args) {
        Path script = repositoryRoot().resolve(SCRIPT);
        List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
        cmd.addAll(args);
        Path out = null;
        try {
            out = Files.createTempFile("baton-own-server", ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.environment().put("BATON_OWNER_PID", Long.toString(ProcessHandle.current().pid()));
            Process p = pb.start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", cmd) + " did not finish within " + TIMEOUT_SECONDS + " s: "
                        + Files.readString(out, StandardCharsets.UTF_8));
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new AssertionError(String.join(" ", cmd) + " failed with status " + p.exitValue() + ":\n" + text);
            }
            return text;
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + String.join(" ", cmd), e);
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // a temporary file left behind
                }
            }
        }
    }

    /** The repository root: the first directory upwards from the working directory that holds {@value #SCRIPT}. */
    static Path repositoryRoot() {
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve(SCRIPT))) {
            root = root.getParent();
        }
        if (root == null) {
            throw new AssertionError("no " + SCRIPT + " above " + Path.of("").toAbsolutePath()
                    + ": own servers are started by that script of Baton's repository");
        }
        return root;
    }
}
