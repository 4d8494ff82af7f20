package dev.baton.checker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The {@code restart} fault: stops and starts the database server the way {@code scripts/start-servers.sh}
 * starts it, so it works on the machines that script sets up (Debian's PostgreSQL cluster, MariaDB started
 * with {@code start-stop-daemon}) and on no others. Every command the checker runs to restart a server is in
 * this class:
 * <ul>
 *   <li>PostgreSQL: {@code pg_ctlcluster --skip-systemctl-redirect <version> main restart -m fast} (a fast
 *       shutdown: sessions are ended, the server checkpoints and starts again);</li>
 *   <li>MariaDB/MySQL: {@code SIGTERM} to {@code mariadbd} (a clean shutdown), wait until it is gone, then
 *       {@code start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd};</li>
 *   <li>Redis: {@code redis-cli -p <port> shutdown nosave}, wait until the port is closed, then
 *       {@code redis-server} with the options of {@code scripts/start-servers.sh} (no persistence: every key is
 *       lost, as in a failover to an empty server);</li>
 *   <li>ZooKeeper: {@code SIGTERM} to the {@code ZooKeeperServerMain} process running {@value #ZOOKEEPER_HOME}{@code
 *       /zoo.cfg}, wait until it is gone, then {@value #ZOOKEEPER_HOME}{@code /run.sh}
 *       (the start command that script wrote; the data directory, and so the sessions, survive).</li>
 * </ul>
 * Either way it returns once the server accepts TCP connections again, or throws after {@link #TIMEOUT}.
 * The server must be on this host (a loopback URL): the checker refuses to restart anything else.
 */
final class ServerRestart {
    /** How long a restart may take before the checker gives up on it. */
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String SCRIPT = "scripts/start-servers.sh";
    /** Where {@code scripts/start-servers.sh} keeps the ZooKeeper server's config, start command and data. */
    static final String ZOOKEEPER_HOME = "/var/lib/baton-zookeeper";
    private static final Pattern HOST_PORT = Pattern.compile("(?i)(?:jdbc:)?(postgresql|mariadb|mysql|redis|zookeeper)://(?:([^@/]*)@)?([^/:?,]+)(?::(\\d+))?.*");

    /** The servers the checker can restart. */
    private enum Server {
        POSTGRESQL("PostgreSQL", 5432), MARIADB("MariaDB", 3306), REDIS("Redis", 6379), ZOOKEEPER("ZooKeeper", 2181);

        final String label;
        final int defaultPort;

        Server(String label, int defaultPort) {
            this.label = label;
            this.defaultPort = defaultPort;
        }
    }

    private final Server server;
    private final InetSocketAddress address;
    /** Redis only: the password of the URL ({@code redis://[user]:password@host}), for {@code redis-cli}, or null. */
    private final String redisPassword;

    private ServerRestart(Server server, InetSocketAddress address, String redisPassword) {
        this.server = server;
        this.address = address;
        this.redisPassword = redisPassword;
    }

    /**
     * The restart of the server at this URL.
     *
     * @throws IllegalArgumentException if the URL is not a PostgreSQL or MariaDB/MySQL server on this host
     */
    static ServerRestart of(String url) {
        Matcher m = HOST_PORT.matcher(url);
        boolean jdbc = url.toLowerCase(Locale.ROOT).startsWith("jdbc:");
        boolean sql = m.matches() && !m.group(1).equalsIgnoreCase("redis") && !m.group(1).equalsIgnoreCase("zookeeper");
        if (!m.matches() || jdbc != sql) {
            throw new IllegalArgumentException("--faults restart: '" + url + "' is not a PostgreSQL, MariaDB/MySQL,"
                    + " Redis or ZooKeeper server URL with a //host part; restart works on servers started as " + SCRIPT + " starts them");
        }
        Server server = switch (m.group(1).toLowerCase(Locale.ROOT)) {
            case "postgresql" -> Server.POSTGRESQL;
            case "redis" -> Server.REDIS;
            case "zookeeper" -> Server.ZOOKEEPER;
            default -> Server.MARIADB;
        };
        int port = m.group(4) != null ? Integer.parseInt(m.group(4)) : server.defaultPort;
        String host = m.group(3);
        String userInfo = m.group(2);
        String password = userInfo != null && userInfo.contains(":") ? userInfo.substring(userInfo.indexOf(':') + 1) : null;
        try {
            if (!InetAddress.getByName(host).isLoopbackAddress()) {
                throw new IllegalArgumentException("--faults restart: '" + host + "' is not this host; the checker"
                        + " restarts only a local server, started as " + SCRIPT + " starts it");
            }
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--faults restart: unknown host '" + host + "'", e);
        }
        return new ServerRestart(server, new InetSocketAddress(host, port),
                server == Server.REDIS && password != null && !password.isEmpty() ? password : null);
    }

    /** For the report: what the restart does. */
    String description() {
        return switch (server) {
            case POSTGRESQL -> "pg_ctlcluster restart -m fast";
            case MARIADB -> "SIGTERM mariadbd + start-stop-daemon";
            case REDIS -> "SHUTDOWN NOSAVE + redis-server (no persistence)";
            case ZOOKEEPER -> "SIGTERM zookeeper + " + ZOOKEEPER_HOME + "/run.sh";
        };
    }

    /** Restarts the server; returns once it accepts connections again. */
    void run() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        if (server == Server.POSTGRESQL) {
            String version = postgresVersion();
            exec(List.of("pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart", "-m", "fast"));
        } else if (server == Server.REDIS) {
            String port = Integer.toString(address.getPort());
            exec(List.of("redis-cli", "-h", address.getHostString(), "-p", port, "shutdown", "nosave"), true,
                    redisPassword);
            while (accepts()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("Redis at " + address + " did not stop within " + TIMEOUT.toSeconds()
                            + " s of SHUTDOWN NOSAVE");
                }
                Thread.sleep(50);
            }
            // as scripts/start-servers.sh starts it
            exec(List.of("redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", port,
                    "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", "/var/log/redis/ci.log"));
        } else if (server == Server.ZOOKEEPER) {
            ProcessHandle zk = zookeeper().orElseThrow(() -> new IOException("no ZooKeeper server process on this"
                    + " host (" + SCRIPT + " starts it)"));
            long pid = zk.pid();
            zk.destroy(); // SIGTERM
            while (zk.isAlive()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("ZooKeeper (pid " + pid + ") did not stop within " + TIMEOUT.toSeconds()
                            + " s of SIGTERM");
                }
                Thread.sleep(50);
            }
            exec(List.of("sh", ZOOKEEPER_HOME + "/run.sh"));
        } else {
            ProcessHandle mariadb = mariadbd().orElseThrow(() -> new IOException("no mariadbd process on this host"
                    + " (" + SCRIPT + " starts it)"));
            mariadb.destroy(); // SIGTERM: a clean shutdown
            while (mariadb.isAlive()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("mariadbd (pid " + mariadb.pid() + ") did not stop within "
                            + TIMEOUT.toSeconds() + " s of SIGTERM");
                }
                Thread.sleep(50);
            }
            exec(List.of("start-stop-daemon", "--start", "--oknodo", "--background", "--exec", "/usr/sbin/mariadbd"));
        }
        while (!accepts()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException(server.label + " at " + address + " did not accept"
                        + " connections within " + TIMEOUT.toSeconds() + " s of its restart; " + SCRIPT
                        + " starts it again");
            }
            Thread.sleep(50);
        }
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(address, 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static String postgresVersion() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/etc/postgresql"))) {
            return s.map(p -> p.getFileName().toString()).sorted().findFirst()
                    .orElseThrow(() -> new IOException("no cluster under /etc/postgresql (" + SCRIPT + " starts it)"));
        }
    }

    /**
     * The ZooKeeper server {@code scripts/start-servers.sh} started: found by its command line (its main class and
     * its config under {@value #ZOOKEEPER_HOME}), not by the pid file, which a start that lost the race for the port
     * overwrites.
     */
    static Optional<ProcessHandle> zookeeper() {
        return ProcessHandle.allProcesses().filter(h -> h.info().arguments().map(args -> {
            List<String> a = List.of(args);
            return a.contains("org.apache.zookeeper.server.ZooKeeperServerMain")
                    && a.contains(ZOOKEEPER_HOME + "/zoo.cfg");
        }).orElse(false)).findFirst();
    }

    private static Optional<ProcessHandle> mariadbd() {
        return ProcessHandle.allProcesses().filter(h -> h.info().command()
                .map(c -> c.toLowerCase(Locale.ROOT).endsWith("/mariadbd") || c.endsWith("/mysqld")).orElse(false))
                .findFirst();
    }

    private static void exec(List<String> cmd) throws IOException, InterruptedException {
        exec(cmd, false, null);
    }

    /**
     * @param closesConnection the command ends the server, which may drop its connection before answering: its status
     *                         is not checked, but an error reply it printed ({@code (error) NOAUTH …}) is
     * @param redisAuth        a password for {@code redis-cli} (passed as {@code REDISCLI_AUTH}, never on the
     *                         command line), or null
     */
    private static void exec(List<String> cmd, boolean closesConnection, String redisAuth)
            throws IOException, InterruptedException {
        // output to a file, not a pipe: a server started in the background may keep the pipe open for ever
        Path out = Files.createTempFile("baton-check-restart", ".log");
        try {
            ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(cmd)).redirectErrorStream(true)
                    .redirectOutput(out.toFile());
            if (redisAuth != null) {
                pb.environment().put("REDISCLI_AUTH", redisAuth);
            }
            Process p = pb.start();
            if (!p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish within " + TIMEOUT.toSeconds() + " s");
            }
            String output = Files.readString(out, StandardCharsets.UTF_8).strip();
            if ((p.exitValue() != 0 && !closesConnection) || output.contains("(error)") || output.startsWith("ERR")) {
                throw new IOException(String.join(" ", cmd) + " failed with status " + p.exitValue() + ": " + output
                        + " (" + SCRIPT + " starts the servers)");
            }
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
