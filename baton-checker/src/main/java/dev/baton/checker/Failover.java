package dev.baton.checker;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code failover} fault: the server that leads a replicated deployment of this host is lost, another takes its
 * place, and the lost one comes back as a follower — so the deployment is whole again for the next fault or
 * scenario. Every command the checker runs for it is in this class:
 * <ul>
 *   <li>a ZooKeeper ensemble ({@code zookeeper://h:p,h:p,h:p}): the leader ({@code srvr}: {@code Mode: leader}) is
 *       killed ({@code SIGKILL}); once another server leads, the killed one is started again with its own command
 *       line in its working directory, and rejoins as a follower;</li>
 *   <li>Redis behind Sentinel ({@code redis-sentinel://…#master}): the primary the Sentinels name
 *       ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}) is killed ({@code SIGKILL}); once the Sentinels name another
 *       primary that answers {@code ROLE} as one, the killed one is started again with its config file
 *       ({@code INFO server}'s {@code config_file}) as a replica of the new primary ({@code --replicaof}); the fault
 *       ends when the new primary has a replica online again;</li>
 *   <li>PostgreSQL primary + standby ({@code jdbc:postgresql://h:p,h:p/db?…}): the primary
 *       ({@code pg_is_in_recovery()} false) is stopped with {@code pg_ctl stop -m immediate} (a crash), the standby
 *       is promoted ({@code pg_ctl promote}); then the old primary's data directory is <b>deleted</b> and made again as
 *       a standby of the new primary ({@code pg_basebackup -R -X stream}), and started on its port
 *       ({@code pg_ctl start -o "-p <port>"}); the fault ends when it streams.</li>
 * </ul>
 * The {@code switchover} fault is Redis's planned failover: {@code SENTINEL FAILOVER <master>}, the old primary
 * staying up (and reachable by its clients) until the Sentinels make it a replica of the promoted one; it ends when
 * the new primary has it online as a replica.
 * Every node must be a process of this host that this user can see (root, or the servers' user). Each restarted
 * server runs in a session of its own, reading nothing. The URL's credentials reach the servers as the clients'
 * do: Redis, the user-info ({@code redis-sentinel://[user:]password@…}) for the primary and its replicas, a Sentinel
 * with the URL's {@code sentinelPassword} if it has one, else asked again with the user-info's password only if it
 * answers {@code NOAUTH}; PostgreSQL, the {@code user} and {@code password}
 * parameters, for the JDBC connections and {@code pg_basebackup}. A password goes to {@code redis-cli} and
 * {@code pg_basebackup} in their environment ({@code REDISCLI_AUTH}, {@code PGPASSWORD}), never on a command line,
 * so no message that quotes a failed command shows it.
 */
final class Failover {
    /** How long each step (an election, a promotion, a re-created node) may take. */
    static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final Pattern HOSTS = Pattern.compile("(?i)(?:jdbc:)?(zookeeper|redis-sentinel|postgresql)://"
            + "(?:([^/?#]*)@)?([^/?#@]+)([^#]*)(?:#(.*))?");
    private static final Pattern PASSWORD_PARAMETER = Pattern.compile("(?i)[?&]password=([^&]*)");
    private static final Pattern SENTINEL_PASSWORD_PARAMETER = Pattern.compile("[?&]sentinelPassword=([^&]*)");

    /** The kinds of deployment the checker can fail over. */
    enum Deployment { ZOOKEEPER, REDIS_SENTINEL, POSTGRESQL }

    /** What one failover did, in {@link System#nanoTime()}: the kill, the new leader serving, the deployment whole. */
    record Outcome(String description, long killed, long serving, long whole) {
    }

    private final Deployment deployment;
    private final List<InetSocketAddress> nodes;
    /** PostgreSQL: the URL's path and query (database, user, …), without {@code targetServerType}. */
    private final String rest;
    /** Redis: the master's name in the Sentinels. */
    private final String master;
    /** Redis: the ACL user of the URL's user-info ({@code user:password@}), or null. */
    private final String redisUser;
    /**
     * The URL's password, percent-decoded, or null: Redis, its user-info (Lettuce's password for the primary and its
     * replicas); PostgreSQL, its {@code password} parameter. Given to the commands in their environment only
     * ({@code REDISCLI_AUTH}, {@code PGPASSWORD}), never on a command line or in a message.
     */
    private final String password;
    /** Redis: the URL's {@code sentinelPassword}, percent-decoded (the Sentinels' own password), or null. */
    private final String sentinelPassword;

    private Failover(Deployment deployment, List<InetSocketAddress> nodes, String rest, String master,
                     String redisUser, String password, String sentinelPassword) {
        this.deployment = deployment;
        this.nodes = nodes;
        this.rest = rest;
        this.master = master;
        this.redisUser = redisUser;
        this.password = password;
        this.sentinelPassword = sentinelPassword;
    }

    /**
     * The failover of the deployment at this URL.
     *
     * @throws IllegalArgumentException if the URL is not a ZooKeeper ensemble, a Redis Sentinel URL or a PostgreSQL
     *                                  multi-host URL, or a node is not on this host
     */
    static Failover of(String url) {
        Matcher m = HOSTS.matcher(url);
        boolean jdbc = url.toLowerCase(Locale.ROOT).startsWith("jdbc:");
        if (!m.matches() || jdbc != m.group(1).equalsIgnoreCase("postgresql")) {
            throw new IllegalArgumentException("--faults failover: '" + url + "' is not a ZooKeeper ensemble"
                    + " (zookeeper://h:p,h:p,…), Redis behind Sentinel (redis-sentinel://h:p,…#master) or PostgreSQL"
                    + " with a standby (jdbc:postgresql://h:p,h:p/db?targetServerType=primary)");
        }
        Deployment d = switch (m.group(1).toLowerCase(Locale.ROOT)) {
            case "zookeeper" -> Deployment.ZOOKEEPER;
            case "redis-sentinel" -> Deployment.REDIS_SENTINEL;
            default -> Deployment.POSTGRESQL;
        };
        int defaultPort = switch (d) {
            case ZOOKEEPER -> 2181;
            case REDIS_SENTINEL -> 26379;
            case POSTGRESQL -> 5432;
        };
        List<InetSocketAddress> nodes = new ArrayList<>();
        for (String hp : m.group(3).split(",")) {
            int colon = hp.lastIndexOf(':');
            String host = colon > 0 ? hp.substring(0, colon) : hp;
            int port = colon > 0 ? Integer.parseInt(hp.substring(colon + 1)) : defaultPort;
            InetSocketAddress a = new InetSocketAddress(host, port);
            if (a.getAddress() == null || !a.getAddress().isLoopbackAddress()) {
                throw new IllegalArgumentException("--faults failover: '" + host + "' is not this host; the checker"
                        + " fails over only servers of this host");
            }
            nodes.add(a);
        }
        if (d != Deployment.REDIS_SENTINEL && nodes.size() < 2) {
            throw new IllegalArgumentException("--faults failover: '" + url + "' names one server; a failover needs"
                    + " the URL of every server of the deployment");
        }
        if (d == Deployment.REDIS_SENTINEL && (m.group(5) == null || m.group(5).isEmpty())) {
            throw new IllegalArgumentException("--faults failover: '" + url + "' names no master (#name)");
        }
        String rest = m.group(4).replaceAll("(?i)([?&])targetServerType=[^&]*&?", "$1").replaceAll("[?&]$", "");
        String user = null;
        String password = null;
        if (d == Deployment.REDIS_SENTINEL && m.group(2) != null && !m.group(2).isEmpty()) {
            RedisUserInfo credentials = RedisUserInfo.parse(m.group(2));
            user = credentials.user();
            password = credentials.password();
        } else if (d == Deployment.POSTGRESQL) {
            Matcher p = PASSWORD_PARAMETER.matcher(rest);
            password = p.find() ? RedisUserInfo.decoded(p.group(1)) : null;
        }
        Matcher sp = SENTINEL_PASSWORD_PARAMETER.matcher(rest);
        String sentinelPassword = d == Deployment.REDIS_SENTINEL && sp.find() && !sp.group(1).isEmpty()
                ? RedisUserInfo.decoded(sp.group(1)) : null;
        return new Failover(d, List.copyOf(nodes), rest, m.group(5), user,
                password == null || password.isEmpty() ? null : password, sentinelPassword);
    }

    /** For the report: what the failover does. */
    String description() {
        return switch (deployment) {
            case ZOOKEEPER -> "SIGKILL of the ZooKeeper leader, a new leader elected, the old one restarted as a follower";
            case REDIS_SENTINEL -> "SIGKILL of the Redis primary, Sentinel promotes its replica, the old one restarted as"
                    + " a replica";
            case POSTGRESQL -> "pg_ctl stop -m immediate of the primary, pg_ctl promote of the standby, the old primary"
                    + " re-created as a standby (pg_basebackup)";
        };
    }

    /**
     * Checks, before any scenario runs, that the deployment has a leader and every node is a process of this host
     * that the checker can see.
     *
     * @throws IllegalArgumentException saying why not
     */
    void requireProcesses() {
        try {
            InetSocketAddress leader = leader();
            process(leader);
        } catch (IOException e) {
            throw new IllegalArgumentException("--faults failover: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalArgumentException("--faults failover: interrupted", e);
        }
    }

    /** The leader found, and its process, so that the kill follows the choice of target at once. */
    private InetSocketAddress preparedLeader;
    private ListeningProcess preparedProcess;
    /** PostgreSQL: the standby to promote; Redis: the primary's config file. */
    private InetSocketAddress preparedStandby;
    private String preparedConfigFile;

    /**
     * Finds the leader and its process now, so that {@link #run()} begins with the kill (the lookups take long enough
     * for the holder the checker aims at to let go meanwhile).
     */
    Failover prepare() throws IOException, InterruptedException {
        preparedLeader = leader();
        preparedProcess = process(preparedLeader);
        if (deployment == Deployment.POSTGRESQL) {
            InetSocketAddress primary = preparedLeader;
            preparedStandby = nodes.stream().filter(n -> !n.equals(primary)).filter(n -> inRecovery(n).orElse(false))
                    .findFirst().orElseThrow(() -> new IOException("no standby of " + primary + " among " + nodes
                            + " answers"));
        } else if (deployment == Deployment.REDIS_SENTINEL) {
            preparedConfigFile = "";
            for (String line : redisCli(preparedLeader, "info", "server").split("\\R")) {
                if (line.startsWith("config_file:")) {
                    preparedConfigFile = line.substring("config_file:".length()).strip();
                }
            }
        }
        return this;
    }

    /** {@code SENTINEL FAILOVER}: a planned failover of Redis behind Sentinel, the old primary kept running. */
    Outcome switchover() throws IOException, InterruptedException {
        if (deployment != Deployment.REDIS_SENTINEL) {
            throw new IllegalStateException("a switchover is Redis Sentinel's");
        }
        InetSocketAddress primary = preparedLeader != null ? preparedLeader : leader();
        preparedLeader = null;
        preparedProcess = null;
        long started = System.nanoTime();
        IOException last = null;
        for (InetSocketAddress s : nodes) {
            try {
                sentinelCli(s, "sentinel", "failover", master);
                last = null;
                break;
            } catch (IOException e) {
                last = e;
            }
        }
        if (last != null) {
            throw last;
        }
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        InetSocketAddress next;
        while (true) {
            Optional<InetSocketAddress> named = sentinelMaster();
            if (named.isPresent() && !named.get().equals(primary) && answer(named.get(), "role").startsWith("master")) {
                next = named.get();
                break;
            }
            deadlineCheck(deadline, "the Sentinels promoted no replica after SENTINEL FAILOVER " + master);
            Thread.sleep(20);
        }
        long serving = System.nanoTime();
        while (!answer(next, "info", "replication").contains("state=online")
                || !answer(primary, "role").startsWith("slave")) {
            deadlineCheck(deadline, "the old primary " + primary + " did not become an online replica of " + next);
            Thread.sleep(50);
        }
        return new Outcome("SENTINEL FAILOVER: " + port(next) + " promoted, " + port(primary) + " (kept running) made"
                + " its replica", started, serving, System.nanoTime());
    }

    /** Whether this is Redis behind Sentinel, the deployment a switchover applies to. */
    boolean sentinel() {
        return deployment == Deployment.REDIS_SENTINEL;
    }

    /** Fails the deployment over and makes it whole again. */
    Outcome run() throws IOException, InterruptedException {
        if (preparedLeader == null) {
            prepare();
        }
        try {
            return switch (deployment) {
                case ZOOKEEPER -> zooKeeper();
                case REDIS_SENTINEL -> redis();
                case POSTGRESQL -> postgres();
            };
        } finally {
            preparedLeader = null;
            preparedProcess = null;
        }
    }

    // ---- ZooKeeper

    private Outcome zooKeeper() throws IOException, InterruptedException {
        InetSocketAddress leader = preparedLeader;
        ListeningProcess p = preparedProcess;
        List<String> again = new ArrayList<>(List.of(p.command()));
        again.addAll(p.arguments());
        long killed = System.nanoTime();
        p.handle().destroyForcibly();
        awaitExit(p);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            Optional<InetSocketAddress> next = zooKeeperLeader();
            if (next.isPresent() && !next.get().equals(leader)) {
                break;
            }
            deadlineCheck(deadline, "no other ZooKeeper server became leader after " + leader + " was killed");
            Thread.sleep(20);
        }
        long serving = System.nanoTime();
        ServerRestart.startAgain(again, p.directory(), p.directory().resolve("zookeeper.log"));
        deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!zooKeeperMode(leader).map(mode -> mode.equals("follower") || mode.equals("leader")).orElse(false)) {
            deadlineCheck(deadline, "the restarted ZooKeeper server " + leader + " did not rejoin the ensemble");
            Thread.sleep(50);
        }
        return new Outcome("SIGKILL of leader " + port(leader) + ", new leader " + zooKeeperLeader().map(Failover::port)
                .orElse("?") + ", " + port(leader) + " rejoined", killed, serving, System.nanoTime());
    }

    private Optional<InetSocketAddress> zooKeeperLeader() {
        for (InetSocketAddress n : nodes) {
            if (zooKeeperMode(n).filter(m -> m.equals("leader") || m.equals("standalone")).isPresent()) {
                return Optional.of(n);
            }
        }
        return Optional.empty();
    }

    /** The {@code Mode:} line of the server's {@code srvr} answer, if it answers. */
    static Optional<String> zooKeeperMode(InetSocketAddress node) {
        try (Socket s = new Socket()) {
            s.connect(node, 500);
            s.setSoTimeout(1000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String text = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            for (String line : text.split("\n")) {
                if (line.startsWith("Mode: ")) {
                    return Optional.of(line.substring("Mode: ".length()).strip());
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    // ---- Redis behind Sentinel

    private Outcome redis() throws IOException, InterruptedException {
        InetSocketAddress primary = preparedLeader;
        ListeningProcess p = preparedProcess;
        String configFile = preparedConfigFile;
        if (configFile.isEmpty()) {
            throw new IOException("the Redis primary " + primary + " runs without a config file: the checker could"
                    + " not start it again as a replica");
        }
        // Debian's redis-server is a link to redis-check-rdb, which acts by the name it is started with
        String executable = p.command().endsWith("/redis-server") ? p.command() : "redis-server";
        long killed = System.nanoTime();
        p.handle().destroyForcibly();
        awaitExit(p);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        InetSocketAddress next;
        while (true) {
            Optional<InetSocketAddress> named = sentinelMaster();
            if (named.isPresent() && !named.get().equals(primary) && answer(named.get(), "role").startsWith("master")) {
                next = named.get();
                break;
            }
            deadlineCheck(deadline, "the Sentinels promoted no replica after the primary " + primary + " was killed");
            Thread.sleep(50);
        }
        long serving = System.nanoTime();
        // a replica of the new primary from its first moment (the Sentinels would convert it, seconds later)
        ServerRestart.startAgain(List.of(executable, configFile, "--replicaof", next.getHostString(),
                Integer.toString(next.getPort())), p.directory(), null);
        deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            String replication = answer(next, "info", "replication");
            String role = answer(primary, "role");
            if (replication.contains("state=online") && role.startsWith("slave")) {
                break;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("the restarted Redis " + primary + " did not become an online replica of " + next
                        + " within " + TIMEOUT.toSeconds() + " s; its ROLE: " + oneLine(role) + "; the new primary's"
                        + " replicas: " + oneLine(replication.lines().filter(l -> l.startsWith("slave"))
                        .reduce("", (a, b) -> a + b + " ")) + "; its log ends: " + logTail(configFile));
            }
            Thread.sleep(100);
        }
        return new Outcome("SIGKILL of primary " + port(primary) + ", Sentinel promoted " + port(next) + ", "
                + port(primary) + " back as its replica", killed, serving, System.nanoTime());
    }

    private Optional<InetSocketAddress> sentinelMaster() throws InterruptedException {
        for (InetSocketAddress s : nodes) {
            try {
                String[] hp = sentinelCli(s, "sentinel", "get-master-addr-by-name", master).strip().split("\\R");
                if (hp.length == 2) {
                    return Optional.of(new InetSocketAddress(hp[0].strip(), Integer.parseInt(hp[1].strip())));
                }
            } catch (IOException | NumberFormatException e) {
                // this Sentinel is down or does not know the master: ask the next
            }
        }
        return Optional.empty();
    }

    /** What the server answers, or nothing if it does not (yet). */
    private String answer(InetSocketAddress node, String... args) throws InterruptedException {
        try {
            return redisCli(node, args);
        } catch (IOException e) {
            return "";
        }
    }

    /** A command to a Redis primary or replica, with the URL's credentials. */
    private String redisCli(InetSocketAddress node, String... args) throws IOException, InterruptedException {
        return exec(redisCliCommand(node, args), redisEnvironment());
    }

    /**
     * A command to a Sentinel: with the URL's {@code sentinelPassword} if it has one; else without credentials
     * (Lettuce gives the user-info's to the primary only), and with them again if this Sentinel asks for a password
     * ({@code NOAUTH}).
     */
    private String sentinelCli(InetSocketAddress sentinel, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "--raw", "-h", sentinel.getHostString(), "-p",
                Integer.toString(sentinel.getPort())));
        cmd.addAll(List.of(args));
        if (sentinelPassword != null) {
            return exec(cmd, Map.of("REDISCLI_AUTH", sentinelPassword));
        }
        String out;
        try {
            out = exec(cmd, Map.of());
        } catch (IOException e) {
            // a redis-cli that exits non-zero on an error reply
            if (password == null || !String.valueOf(e.getMessage()).contains("NOAUTH")) {
                throw e;
            }
            return redisCli(sentinel, args);
        }
        return out.startsWith("NOAUTH") && password != null ? redisCli(sentinel, args) : out;
    }

    /** The environment of {@code redis-cli} for the primary and replicas: the URL's password, if any. */
    Map<String, String> redisEnvironment() {
        return deployment == Deployment.REDIS_SENTINEL && password != null ? Map.of("REDISCLI_AUTH", password)
                : Map.of();
    }

    /** The environment of {@code pg_basebackup}: the URL's password, if any. */
    Map<String, String> postgresEnvironment() {
        return deployment == Deployment.POSTGRESQL && password != null ? Map.of("PGPASSWORD", password) : Map.of();
    }

    /** The {@code redis-cli} command line for a primary or replica: the URL's user, never its password. */
    List<String> redisCliCommand(InetSocketAddress node, String... args) {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "--raw", "-h", node.getHostString(), "-p",
                Integer.toString(node.getPort())));
        if (redisUser != null) {
            cmd.addAll(List.of("--user", redisUser));
        }
        cmd.addAll(List.of(args));
        return cmd;
    }

    // ---- PostgreSQL

    private Outcome postgres() throws IOException, InterruptedException {
        InetSocketAddress primary = preparedLeader;
        InetSocketAddress standby = preparedStandby;
        ListeningProcess p = preparedProcess;
        ListeningProcess s = process(standby);
        Path pgBin = Path.of(p.command()).getParent();
        Path dataDir = p.directory();
        String owner = Files.getOwner(dataDir).getName();
        if (!Files.exists(dataDir.resolve("PG_VERSION"))) {
            throw new IOException(dataDir + " (the working directory of the primary on " + primary
                    + ") is not a PostgreSQL data directory");
        }
        long killed = System.nanoTime();
        exec(asOwner(owner, pgBin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-m", "immediate", "-w",
                "stop"), Map.of());
        exec(asOwner(Files.getOwner(s.directory()).getName(), pgBin.resolve("pg_ctl").toString(), "-D",
                s.directory().toString(), "-w", "-t", Long.toString(TIMEOUT.toSeconds()), "promote"), Map.of());
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!inRecovery(standby).map(r -> !r).orElse(false)) {
            deadlineCheck(deadline, "the standby " + standby + " was not promoted");
            Thread.sleep(20);
        }
        long serving = System.nanoTime();
        // the old primary, re-created as a standby of the new one
        exec(asOwner(owner, "sh", "-c", "rm -rf \"$0\"/* \"$0\"/.[!.]*", dataDir.toString()), Map.of());
        Path log = dataDir.getParent().resolve("postgres-" + primary.getPort() + ".log");
        exec(asOwner(owner, pgBin.resolve("pg_basebackup").toString(), "-h", standby.getHostString(), "-p",
                Integer.toString(standby.getPort()), "-U", user(), "-D", dataDir.toString(), "-R", "-X", "stream",
                "-c", "fast"), postgresEnvironment());
        exec(asOwner(owner, "setsid", pgBin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-l",
                Files.isWritable(log.getParent()) ? log.toString() : "/dev/null", "-o", "-p " + primary.getPort(), "-w",
                "-t", Long.toString(TIMEOUT.toSeconds()), "start"), Map.of());
        deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!streaming(standby)) {
            deadlineCheck(deadline, "the re-created standby " + primary + " does not stream from " + standby);
            Thread.sleep(50);
        }
        return new Outcome("immediate stop of primary " + port(primary) + ", promoted " + port(standby) + ", "
                + port(primary) + " re-created as its standby", killed, serving, System.nanoTime());
    }

    private static List<String> asOwner(String owner, String... cmd) {
        List<String> full = new ArrayList<>();
        if (!owner.equals(System.getProperty("user.name"))) {
            full.addAll(List.of("runuser", "-u", owner, "--"));
        }
        full.addAll(List.of(cmd));
        return full;
    }

    private String user() {
        Matcher m = Pattern.compile("(?i)[?&]user=([^&]*)").matcher(rest);
        return m.find() ? m.group(1) : "postgres";
    }

    private String jdbcUrl(InetSocketAddress node) {
        String r = rest.contains("connectTimeout=") ? rest : rest + (rest.contains("?") ? "&" : "?") + "connectTimeout=2";
        return "jdbc:postgresql://" + node.getHostString() + ":" + node.getPort() + r;
    }

    /** Whether the server is a standby, if it answers. */
    private Optional<Boolean> inRecovery(InetSocketAddress node) {
        try (Connection c = DriverManager.getConnection(jdbcUrl(node)); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
            rs.next();
            return Optional.of(rs.getBoolean(1));
        } catch (SQLException e) {
            return Optional.empty();
        }
    }

    private boolean streaming(InetSocketAddress primary) {
        try (Connection c = DriverManager.getConnection(jdbcUrl(primary)); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")) {
            rs.next();
            return rs.getLong(1) > 0;
        } catch (SQLException e) {
            return false;
        }
    }

    // ---- shared

    /** The node that leads now: the ZooKeeper leader, the primary the Sentinels name, the PostgreSQL primary. */
    private InetSocketAddress leader() throws IOException, InterruptedException {
        Optional<InetSocketAddress> l = switch (deployment) {
            case ZOOKEEPER -> zooKeeperLeader();
            case REDIS_SENTINEL -> sentinelMaster();
            case POSTGRESQL -> nodes.stream().filter(n -> inRecovery(n).map(r -> !r).orElse(false)).findFirst();
        };
        return l.orElseThrow(() -> new IOException("no " + switch (deployment) {
            case ZOOKEEPER -> "ZooKeeper server of " + nodes + " answers srvr with Mode: leader";
            case REDIS_SENTINEL -> "Sentinel of " + nodes + " names a primary for '" + master + "'";
            case POSTGRESQL -> "PostgreSQL server of " + nodes + " is a primary";
        }));
    }

    private ListeningProcess process(InetSocketAddress node) throws IOException {
        ListeningProcess p = ListeningProcess.of(node.getPort()).orElseThrow(() -> new IOException("no process of"
                + " this host that this user can see listens on port " + node.getPort() + ": the failover fault kills"
                + " and restarts the servers of the URL (run the checker as root or as the servers' user)"));
        String exe = p.executable();
        boolean kind = switch (deployment) {
            case ZOOKEEPER -> p.arguments().contains("org.apache.zookeeper.server.quorum.QuorumPeerMain");
            case REDIS_SENTINEL -> exe.startsWith("redis-server") || exe.startsWith("redis-check-rdb");
            case POSTGRESQL -> exe.equals("postgres") || exe.equals("postmaster");
        };
        if (!kind) {
            throw new IOException("the process listening on port " + node.getPort() + " (pid " + p.handle().pid()
                    + ", " + p.command() + ") is not a " + deployment.name().toLowerCase(Locale.ROOT).replace('_', ' ')
                    + " server the checker knows how to fail over");
        }
        return p;
    }

    private static void awaitExit(ListeningProcess p) throws IOException, InterruptedException {
        if (!p.handle().onExit().completeOnTimeout(null, TIMEOUT.toSeconds(), TimeUnit.SECONDS).isDone()
                || p.handle().isAlive()) {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (p.handle().isAlive()) {
                deadlineCheck(deadline, "pid " + p.handle().pid() + " did not end");
                Thread.sleep(20);
            }
        }
    }

    private static String oneLine(String s) {
        return s.isBlank() ? "(no answer)" : s.strip().replaceAll("\\s+", " ");
    }

    /** The last lines of the log file that a Redis config file names, for an error message; never throws. */
    private static String logTail(String configFile) {
        try {
            String logFile = Files.readAllLines(Path.of(configFile)).stream().map(String::strip)
                    .filter(l -> l.startsWith("logfile ")).map(l -> l.substring("logfile ".length()).replace("\"", ""))
                    .reduce((a, b) -> b).orElse("");
            if (logFile.isEmpty()) {
                return "(no log file)";
            }
            List<String> lines = Files.readAllLines(Path.of(logFile));
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 6), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private static void deadlineCheck(long deadline, String what) throws IOException {
        if (System.nanoTime() - deadline > 0) {
            throw new IOException(what + " within " + TIMEOUT.toSeconds() + " s");
        }
    }

    private static String port(InetSocketAddress a) {
        return ":" + a.getPort();
    }

    /** Runs a command to its end (output to a file, never a pipe a server started by it could keep open). */
    private static String exec(List<String> cmd, Map<String, String> environment)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("baton-check-failover", ".log");
        try {
            ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(cmd)).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            pb.environment().putAll(environment);
            Process p = pb.start();
            if (!p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish within " + TIMEOUT.toSeconds() + " s");
            }
            String output = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0 || output.startsWith("ERR") || output.startsWith("Could not connect")) {
                throw new IOException(String.join(" ", cmd) + " failed with status " + p.exitValue() + ": "
                        + output.strip());
            }
            return output;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
