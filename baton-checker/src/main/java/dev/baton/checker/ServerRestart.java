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
import java.util.Map;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The {@code restart} fault: stops and starts the server of the URL under test — the process of this host that
 * listens on the URL's port — and no other. Every command the checker runs to restart a server is in this class:
 * <ul>
 *   <li>PostgreSQL ({@code postgres}): {@code pg_ctl -D <its working directory, the data directory> -m fast restart}
 *       as the data directory's owner (a fast shutdown: sessions are ended, the server checkpoints and starts again
 *       with the options it was started with, from {@code postmaster.opts});</li>
 *   <li>MariaDB/MySQL ({@code mariadbd}, {@code mysqld}): {@code SIGTERM} (a clean shutdown), wait until it is gone,
 *       then its own command line again, in its working directory;</li>
 *   <li>Redis ({@code redis-server}): {@code redis-cli SHUTDOWN NOSAVE} (every key is lost, as in a failover to an
 *       empty server), then {@code redis-server} again with its config file ({@code INFO server}'s
 *       {@code config_file}) or, for a server started without one, with the settings {@code CONFIG GET} reads
 *       ({@value #REDIS_SETTINGS});</li>
 *   <li>ZooKeeper (a JVM running {@code ZooKeeperServerMain}): {@code SIGTERM}, wait until it is gone, then its own
 *       command line again in its working directory (the data directory, and so the sessions, survive).</li>
 * </ul>
 * Each restarted server runs in a session of its own, so a signal to the checker's process group never reaches it.
 * Either way it returns once the server accepts TCP connections again, or throws after {@link #TIMEOUT}.
 * The server must be on this host (a loopback URL) and visible to this user (root, or the server's own user): the
 * checker refuses anything else with a sentence saying why.
 */
final class ServerRestart {
    /** How long a restart may take before the checker gives up on it. */
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String SCRIPT = "scripts/start-servers.sh";
    /** The settings a Redis started without a config file is started again with. */
    static final String REDIS_SETTINGS = "bind, port, dir, dbfilename, save, appendonly, requirepass, maxmemory,"
            + " maxmemory-policy, logfile, protected-mode";
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
    /** Redis only: the URL's user and password ({@code redis://[[user]:]password@host}), for {@code redis-cli}. */
    private final RedisUserInfo redisUser;

    private ServerRestart(Server server, InetSocketAddress address, RedisUserInfo redisUser) {
        this.server = server;
        this.address = address;
        this.redisUser = redisUser;
    }

    /**
     * The restart of the server at this URL.
     *
     * @throws IllegalArgumentException if the URL is not a PostgreSQL, MariaDB/MySQL, Redis or ZooKeeper server on this
     *                                  host
     */
    static ServerRestart of(String url) {
        if (url.matches("(?i)(?:jdbc:)?[a-z]+://[^/?#]*,.*") || url.toLowerCase(Locale.ROOT).startsWith("redis-sentinel:")) {
            throw new IllegalArgumentException("--faults restart: the URL names several servers (an ensemble, Sentinels"
                    + " or a primary with standbys); the restart fault restarts one server: use --faults failover");
        }
        Matcher m = HOST_PORT.matcher(url);
        boolean jdbc = url.toLowerCase(Locale.ROOT).startsWith("jdbc:");
        boolean sql = m.matches() && !m.group(1).equalsIgnoreCase("redis") && !m.group(1).equalsIgnoreCase("zookeeper");
        if (!m.matches() || jdbc != sql) {
            throw new IllegalArgumentException("--faults restart: the URL is not a PostgreSQL, MariaDB/MySQL,"
                    + " Redis or ZooKeeper server URL with a //host part");
        }
        Server server = switch (m.group(1).toLowerCase(Locale.ROOT)) {
            case "postgresql" -> Server.POSTGRESQL;
            case "redis" -> Server.REDIS;
            case "zookeeper" -> Server.ZOOKEEPER;
            default -> Server.MARIADB;
        };
        int port = m.group(4) != null ? Integer.parseInt(m.group(4)) : server.defaultPort;
        String host = m.group(3);
        try {
            if (!InetAddress.getByName(host).isLoopbackAddress()) {
                throw new IllegalArgumentException("--faults restart: '" + host + "' is not this host; the checker"
                        + " restarts only a server of this host, the one listening on the URL's port");
            }
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--faults restart: unknown host '" + host + "'", e);
        }
        return new ServerRestart(server, new InetSocketAddress(host, port),
                server == Server.REDIS ? RedisUserInfo.parse(m.group(2)) : RedisUserInfo.NONE);
    }

    /** For the report: what the restart does. */
    String description() {
        return switch (server) {
            case POSTGRESQL -> "pg_ctl restart -m fast of the server on port " + address.getPort();
            case MARIADB -> "SIGTERM + the same command line, the server on port " + address.getPort();
            case REDIS -> "SHUTDOWN NOSAVE + redis-server (no persistence), the server on port " + address.getPort();
            case ZOOKEEPER -> "SIGTERM + the same command line, the server on port " + address.getPort();
        };
    }

    /**
     * The server's process, checked to be of the URL's kind.
     *
     * @throws IOException saying why the checker will not restart it
     */
    private ListeningProcess process() throws IOException {
        ListeningProcess p = ListeningProcess.of(address.getPort()).orElseThrow(() -> new IOException("no process of"
                + " this host that this user can see listens on port " + address.getPort() + ": the restart fault"
                + " stops and starts the server of the URL (run the checker as root or as the server's user)"));
        String exe = p.executable();
        boolean kind = switch (server) {
            case POSTGRESQL -> exe.equals("postgres") || exe.equals("postmaster");
            case MARIADB -> exe.equals("mariadbd") || exe.equals("mysqld");
            // Debian's redis-server is a link to redis-check-rdb, which acts by the name it is started with
            case REDIS -> exe.startsWith("redis-server") || exe.startsWith("redis-check-rdb");
            case ZOOKEEPER -> p.arguments().contains("org.apache.zookeeper.server.ZooKeeperServerMain");
        };
        if (!kind) {
            throw new IOException("the process listening on port " + address.getPort() + " (pid " + p.handle().pid()
                    + ", " + p.command() + ") is not a " + server.label + " server the checker knows how to restart");
        }
        return p;
    }

    /**
     * Checks, before any scenario runs, that the server of the URL is a process of this host that the checker can
     * restart.
     *
     * @throws IllegalArgumentException saying why not
     */
    void requireProcess() {
        try {
            process();
        } catch (IOException e) {
            throw new IllegalArgumentException("--faults restart: " + e.getMessage(), e);
        }
    }

    /** Restarts the server; returns once it accepts connections again. */
    void run() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        ListeningProcess p = process();
        switch (server) {
            case POSTGRESQL -> {
                Path pgCtl = Path.of(p.command()).resolveSibling("pg_ctl");
                String owner = Files.getOwner(p.directory()).getName();
                List<String> cmd = new ArrayList<>(List.of("setsid"));
                if (!owner.equals(System.getProperty("user.name"))) {
                    cmd.addAll(List.of("runuser", "-u", owner, "--"));
                }
                cmd.addAll(List.of(pgCtl.toString(), "-D", p.directory().toString(), "-m", "fast", "-w", "-t",
                        Long.toString(TIMEOUT.toSeconds()), "-l", "/tmp/baton-check-restart-postgresql-"
                                + address.getPort() + ".log", "restart"));
                exec(cmd, false, null);
            }
            case REDIS -> {
                List<String> again = redisCommandLine(p);
                exec(redisCli("shutdown", "nosave"), true, redisUser.password());
                awaitExit(p, deadline);
                startAgain(again, p.directory(), null);
            }
            default -> {
                p.handle().destroy(); // SIGTERM: a clean shutdown
                awaitExit(p, deadline);
                List<String> again = new ArrayList<>(List.of(p.command()));
                again.addAll(p.arguments());
                startAgain(again, p.directory(), server == Server.ZOOKEEPER ? p.directory().resolve("zookeeper.log") : null);
            }
        }
        while (!accepts()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException(server.label + " at " + address + " did not accept"
                        + " connections within " + TIMEOUT.toSeconds() + " s of its restart");
            }
            Thread.sleep(50);
        }
    }

    private void awaitExit(ListeningProcess p, long deadline) throws IOException, InterruptedException {
        while (p.handle().isAlive() || accepts()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException(server.label + " (pid " + p.handle().pid() + ") did not stop within "
                        + TIMEOUT.toSeconds() + " s");
            }
            Thread.sleep(50);
        }
    }

    /** The {@code redis-cli} command line for this server: the URL's user, never its password. */
    List<String> redisCli(String... args) {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", address.getHostString(), "-p",
                Integer.toString(address.getPort())));
        if (redisUser.user() != null) {
            cmd.addAll(List.of("--user", redisUser.user()));
        }
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** How to start this Redis again: its config file, else the settings {@link #REDIS_SETTINGS} read now. */
    private List<String> redisCommandLine(ListeningProcess p) throws IOException, InterruptedException {
        String configFile = "";
        String executable = "redis-server";
        for (String line : execOutput(redisCli("info", "server")).split("\\R")) {
            if (line.startsWith("config_file:")) {
                configFile = line.substring("config_file:".length()).strip();
            } else if (line.startsWith("executable:") && line.strip().endsWith("redis-server")
                    && Files.isExecutable(Path.of(line.substring("executable:".length()).strip()))) {
                executable = line.substring("executable:".length()).strip(); // the name it was started by
            }
        }
        List<String> cmd = new ArrayList<>(List.of(executable));
        if (!configFile.isEmpty()) {
            cmd.add(configFile);
            return cmd;
        }
        for (String name : REDIS_SETTINGS.split(",\\s*")) {
            String[] kv = execOutput(redisCli("--raw", "config", "get", name)).split("\\R", -1);
            if (!kv[0].equals(name)) {
                continue; // a setting this server does not have
            }
            String value = kv.length > 1 ? kv[1] : ""; // an empty value: its line stripped away
            if (name.equals("requirepass") && value.isEmpty()) {
                continue;
            }
            cmd.add("--" + name);
            if (name.equals("bind") || name.equals("save")) {
                if (value.isBlank()) {
                    cmd.add("");
                } else {
                    cmd.addAll(List.of(value.split(" ")));
                }
            } else {
                cmd.add(value);
            }
        }
        cmd.addAll(List.of("--daemonize", "yes"));
        return cmd;
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(address, 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Starts a server again in a session of its own ({@code setsid}), reading nothing, its output appended to log (or
     * discarded); the checker does not wait for it.
     */
    static void startAgain(List<String> cmd, Path directory, Path log) throws IOException {
        List<String> full = new ArrayList<>(List.of("setsid"));
        full.addAll(cmd);
        new ProcessBuilder(full).directory(directory.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(log != null && Files.isWritable(log.getParent())
                        ? ProcessBuilder.Redirect.appendTo(log.toFile()) : ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    /** The environment of {@code redis-cli}: the URL's password, if any. */
    Map<String, String> redisEnvironment() {
        return redisUser.password() != null ? Map.of("REDISCLI_AUTH", redisUser.password()) : Map.of();
    }

    private String execOutput(List<String> cmd) throws IOException, InterruptedException {
        return exec(cmd, false, redisUser.password());
    }

    /**
     * @param closesConnection the command ends the server, which may drop its connection before answering: its status
     *                         is not checked, but an error reply it printed ({@code (error) NOAUTH …}) is
     * @param redisAuth        a password for {@code redis-cli} (passed as {@code REDISCLI_AUTH}, never on the
     *                         command line), or null
     * @return what it printed
     */
    private static String exec(List<String> cmd, boolean closesConnection, String redisAuth)
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
            if ((p.exitValue() != 0 && !closesConnection) || output.contains("(error)") || output.startsWith("ERR")
                    || output.startsWith("NOAUTH") || output.startsWith("WRONGPASS")) {
                throw new IOException(String.join(" ", cmd) + " failed with status " + p.exitValue() + ": " + output);
            }
            return output;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
