package dev.baton.checker;

import dev.baton.internal.BatonVersion;
import dev.baton.internal.Durations;
import dev.baton.internal.Secrets;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code baton check}: runs contending worker processes against a real backend, injects faults into the
 * current lock holder, and checks the history (see {@link Analysis}). One scenario per URL and fault; a
 * block per scenario and a summary table on standard output; exit status {@value #FAIL} if any scenario
 * FAILed, {@value #INCONCLUSIVE} if none failed but one was INCONCLUSIVE, 0 if all passed (or did not apply,
 * or the strategy refused the pool as it documents).
 */
@Command(name = "check", mixinStandardHelpOptions = true, versionProvider = CheckCommand.VersionProvider.class,
        usageHelpAutoWidth = true, sortOptions = false,
        header = "Fault-injection checker: proves (or refutes) mutual exclusion and fencing on a real backend.",
        description = {"Starts --workers worker JVMs contending for --locks locks through the backend at --url,"
                + " each fencing its work at a resource server in this process, kills, pauses, cuts off or kills"
                + " the server sessions of the current holder, and checks the history.",
                "Never point it at a server you cannot afford to have sessions killed on: it terminates the"
                + " workers' own sessions only, but it does create the table baton_check."})
public final class CheckCommand implements Callable<Integer> {
    /** Every scenario passed or did not apply. */
    public static final int PASS = 0;
    /** At least one scenario found a violation. */
    public static final int FAIL = 1;
    /** No violation, but at least one scenario had too few hits (or grants) to say. */
    public static final int INCONCLUSIVE = 3;
    /** Bad arguments. */
    public static final int USAGE = 64;

    /** {@code baton check --version} when the checker runs on its own: {@code baton check} and the build's version. */
    static final class VersionProvider implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"baton check " + BatonVersion.current()};
        }
    }

    @Option(names = "--url", required = true, paramLabel = "URL",
            description = "Backend URL; repeat for several backends (jdbc:postgresql:, jdbc:mariadb:, jdbc:mysql:, jdbc:sqlite:,"
                    + " redis://, rediss://, redis-sentinel://…#MASTER, zookeeper://).")
    List<String> urls;

    @Option(names = "--strategy", defaultValue = "lease", paramLabel = "S",
            description = "Strategy: lease (JDBC lease rows; on a redis:// or zookeeper:// URL, Baton's locks there),"
                    + " session (PostgreSQL advisory locks, MariaDB/MySQL GET_LOCK), run-once (JdbcLockClient.runOnce on"
                    + " a schedule), redis, zookeeper, or a class implementing"
                    + " dev.baton.checker.CheckStrategy (default ${DEFAULT-VALUE}).")
    String strategy;

    @Option(names = "--pool", defaultValue = "default", paramLabel = "P",
            description = "How the workers reach the database: default (the checker's pool), autocommit-off"
                    + " (HikariCP, connections default to autoCommit=false), small (HikariCP of " + Pool.SMALL_SIZE
                    + " connections, what each strategy documents as its need), pgbouncer (through PgBouncer in"
                    + " transaction mode at 127.0.0.1:6432, PostgreSQL URLs; the session strategy must refuse it)"
                    + " (default ${DEFAULT-VALUE}).")
    String pool;

    @Option(names = "--table", defaultValue = "baton_check", paramLabel = "NAME",
            description = "The checker's lock table (default ${DEFAULT-VALUE}); another name keeps two runs on one"
                    + " server apart.")
    String table;

    @Option(names = "--profile", paramLabel = "P",
            description = "quick (CI: lease 1s, 12s per scenario, 3s scheduling margin on every time bound) or standard"
                    + " (lease 2s, 60s per scenario, 1.5s margin); explicit options win.")
    String profile;

    @Option(names = "--workers", paramLabel = "N", description = "Worker JVMs (default 6).")
    Integer workers;

    @Option(names = "--locks", paramLabel = "K", description = "Locks they contend for (default 2).")
    Integer locks;

    @Option(names = "--lease", paramLabel = "D", description = "Lease time under test (default 2s).")
    String lease;

    @Option(names = "--duration", paramLabel = "D", description = "Fault-injection time per scenario (default 60s);"
            + " while fewer than 5 faults (1 restart) hit a holder, a scenario goes on for up to 3× this.")
    String duration;

    @Option(names = "--until-hits", description = "End a scenario's faults as soon as as many have hit a holder as a"
            + " PASS needs (5; 1 for restart, failover or switchover) and nothing is violated, rather than after"
            + " --duration; with too few hits it still goes on for up to 3× --duration (not with --via-cli).")
    boolean untilHits;

    @Option(names = "--faults", split = ",", paramLabel = "F",
            description = "kill, kill-waiter (SIGKILL of a worker waiting in line), pause, session-kill, partition,"
                    + " restart, failover, switchover (Redis Sentinel: SENTINEL FAILOVER), none; one scenario each"
                    + " (default kill, pause, session-kill, partition).")
    List<String> faults;

    @Option(names = "--allow-restart", description = "Allow the restart fault, which stops and starts the server"
            + " of the URL: the process of this host listening on its port (PostgreSQL: pg_ctl restart -m fast;"
            + " MariaDB and ZooKeeper: SIGTERM, then the same command line; Redis: SHUTDOWN NOSAVE, then"
            + " redis-server again, losing every key). Every client of that server loses its connections.")
    boolean allowRestart;

    /** Why {@code --faults failover} (or switchover) without {@code --allow-failover} is refused. */
    private static final String FAILOVER_NOT_ALLOWED = "--faults failover kills the leader of your deployment,"
            + " promotes another server and re-creates the old one as a follower (PostgreSQL: deleting its data"
            + " directory): add --allow-failover to mean it";

    @Option(names = "--allow-failover", description = "Allow the failover fault, on a ZooKeeper ensemble"
            + " (zookeeper://h:p,h:p,h:p: SIGKILL of the leader, restarted as a follower), Redis behind Sentinel"
            + " (redis-sentinel://…#master: SIGKILL of the primary, Sentinel promotes a replica, the old primary"
            + " restarted as a replica) or PostgreSQL with a standby (jdbc:postgresql://h:p,h:p/db: pg_ctl stop -m"
            + " immediate of the primary, pg_ctl promote of the standby, then the old primary's data directory is"
            + " DELETED and made again as a standby with pg_basebackup), and the switchover fault (Redis Sentinel:"
            + " SENTINEL FAILOVER, the old primary kept running). For test deployments of this host, such as"
            + " scripts/start-servers.sh --ha starts.")
    boolean allowFailover;

    @Option(names = "--seed", paramLabel = "N", description = "Seed for the workers' and the nemesis' choices (default: random, printed).")
    Long seed;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON to FILE.")
    Path json;

    @Option(names = "--html", paramLabel = "FILE", description = "Also write a self-contained HTML report to FILE:"
            + " per scenario and lock, a timeline of who waited, who held with which fencing token, where each fault"
            + " hit, and the violations outlined.")
    Path html;

    @Option(names = "--work-dir", paramLabel = "DIR", description = "Where event logs go (default: a new directory under the temp dir).")
    Path workDir;

    @Option(names = "--via-cli", description = "Each worker is a loop of real `baton run` processes whose command"
            + " (shipped with the checker) works on the resource with $BATON_FENCING_TOKEN and starts a grandchild"
            + " that does too; faults pause-jvm, pause-tree, kill, hup, session-kill, partition (default all),"
            + " kill-waiter (SIGKILL of a baton run waiting in line), failover (with --allow-failover: the deployment's"
            + " leader is lost while commands run);"
            + " --strategy lease or session (default 3 workers, 1 lock).")
    boolean viaCli;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private PrintWriter out;
    private PrintWriter err;
    private String commandLine;

    /** Picocli instantiates this; use {@link #execute(String...)}. */
    public CheckCommand() {
    }

    /** Runs and exits with the status. */
    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.exit(execute(args));
    }

    /** Runs in this process and returns the exit status; output to {@link System#out} and {@link System#err}. */
    public static int execute(String... args) {
        return execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    /** Runs with the given writers and returns the exit status. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CheckCommand cmd = new CheckCommand();
        cmd.out = out;
        cmd.err = err;
        cmd.commandLine = "baton check " + String.join(" ", args);
        CommandLine cli = new CommandLine(cmd);
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler((e, a) -> {
            err.println("baton check: " + Secrets.hide(e.getMessage()));
            return USAGE;
        });
        cli.setExecutionExceptionHandler((e, c, p) -> {
            if (e instanceof IllegalArgumentException) {
                err.println("baton check: " + Secrets.hide(e.getMessage(), cmd.urls()));
                return USAGE;
            }
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            err.println("baton check: " + Secrets.hide(String.valueOf(e), cmd.urls()));
            err.print(Secrets.hide(trace.toString(), cmd.urls()));
            return 70;
        });
        int status = cli.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    /**
     * The command line for the report, from a subcommand's original arguments: picocli gives the whole command line
     * ({@code check --url …} under {@code baton}), so a leading {@code check} is the subcommand's own name.
     */
    static String commandLine(List<String> originalArgs) {
        List<String> args = !originalArgs.isEmpty() && originalArgs.get(0).equals("check")
                ? originalArgs.subList(1, originalArgs.size()) : originalArgs;
        return "baton check " + String.join(" ", args);
    }

    @Override
    public Integer call() throws Exception {
        if (out == null) { // run as a picocli subcommand of another command
            out = spec.commandLine().getOut();
            err = spec.commandLine().getErr();
            commandLine = commandLine(spec.commandLine().getParseResult().originalArgs());
        }
        // the command line goes into the report: never with a password of a URL in it
        commandLine = Secrets.hide(commandLine, urls());
        boolean quick;
        if (profile == null || profile.equals("standard")) {
            quick = false;
        } else if (profile.equals("quick")) {
            quick = true;
        } else {
            throw new IllegalArgumentException("--profile: '" + profile + "' is not quick or standard");
        }
        Path htmlDir = html == null ? null : html.toAbsolutePath().getParent();
        if (htmlDir != null && !Files.isDirectory(htmlDir)) {
            throw new IllegalArgumentException("--html: there is no directory " + htmlDir + " to write "
                    + html.getFileName() + " in");
        }
        if (viaCli) {
            if (untilHits) {
                throw new IllegalArgumentException("--until-hits: not with --via-cli");
            }
            return viaCli(quick);
        }
        Duration leaseTime = lease != null ? Durations.parse("--lease", lease) : Duration.ofSeconds(quick ? 1 : 2);
        Duration runTime = duration != null ? Durations.parse("--duration", duration) : Duration.ofSeconds(quick ? 12 : 60);
        if (leaseTime.toMillis() < 200) {
            throw new IllegalArgumentException("--lease: at least 200ms, was " + lease);
        }
        int n = workers != null ? workers : 6;
        int k = locks != null ? locks : 2;
        if (n < 2 || n > 64) {
            throw new IllegalArgumentException("--workers: 2 to 64, was " + n);
        }
        if (k < 1 || k > 64) {
            throw new IllegalArgumentException("--locks: 1 to 64, was " + k);
        }
        Set<String> kinds = new LinkedHashSet<>(faults != null ? faults : List.of("kill", "pause", "session-kill", "partition"));
        for (String f : kinds) {
            if (!ScenarioSpec.FAULTS.contains(f)) {
                throw new IllegalArgumentException("--faults: unknown fault '" + f + "'; use kill, kill-waiter, pause,"
                        + " session-kill, partition, restart, failover, switchover or none");
            }
        }
        if (kinds.contains("restart") && !allowRestart) {
            throw new IllegalArgumentException("--faults restart stops and starts your database server, ending every"
                    + " session of every client on it: add --allow-restart to mean it");
        }
        if ((kinds.contains("failover") || kinds.contains("switchover")) && !allowFailover) {
            throw new IllegalArgumentException(FAILOVER_NOT_ALLOWED);
        }
        Pool poolMode = Pool.byId(pool);
        Map<String, CheckStrategy> strategies = new LinkedHashMap<>();
        for (String u : urls) {
            CheckStrategy s = Strategies.forUrl(strategy, u);
            s.validate(u, poolMode);
            if (kinds.contains("restart") && !u.toLowerCase(java.util.Locale.ROOT).startsWith("jdbc:sqlite:")) {
                ServerRestart.of(u).requireProcess();
            }
            if (kinds.contains("failover") || (kinds.contains("switchover") && RedisStrategy.isSentinel(u))) {
                Failover.of(u).requireProcesses();
            }
            strategies.put(u, s);
        }
        long baseSeed = seed != null ? seed : System.nanoTime() & 0xFFFFFF;
        Path dir = workDir != null ? workDir : Path.of(System.getProperty("java.io.tmpdir"),
                "baton-check-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        out.println("baton check: strategy " + String.join(", ", new java.util.LinkedHashSet<>(
                strategies.values().stream().map(CheckStrategy::name).toList())) + (poolMode == Pool.DEFAULT ? "" : ", pool " + poolMode)
                + ", " + n + " workers, " + k + " locks, lease "
                + leaseTime.toMillis() + " ms, " + runTime.toSeconds() + " s per scenario, seed " + baseSeed
                + ", event logs in " + dir);
        List<Analysis.Result> results = new ArrayList<>();
        List<String> htmlSections = new ArrayList<>();
        int i = 0;
        for (String u : urls) {
            for (String f : kinds) {
                ScenarioSpec spec = new ScenarioSpec(strategies.get(u), u, table, n, k, leaseTime, runTime, f, baseSeed + i,
                        dir.resolve(i + "-" + f), Fence.STRICT, ScenarioSpec.DEFAULT_WORKER_JVM, poolMode,
                        quick ? ScenarioSpec.QUICK_MARGIN : ScenarioSpec.MARGIN);
                i++;
                Analysis analysis = new Analysis(new Scenario(spec, untilHits).run());
                Analysis.Result r = analysis.analyse();
                results.add(r);
                if (html != null) {
                    htmlSections.add(HtmlReport.section(analysis, r));
                }
                out.print(Secrets.hide(Report.block(r), urls));
                out.flush();
            }
        }
        out.println();
        out.println("command: " + commandLine);
        out.print(Secrets.hide(Report.summary(results), urls));
        if (json != null) {
            try {
                Files.writeString(json, Secrets.hide(Report.json(results, commandLine), urls), StandardCharsets.UTF_8);
            } catch (IOException e) {
                err.println("baton check: cannot write " + json + ": " + e.getMessage());
            }
        }
        if (html != null) {
            try {
                Files.writeString(html, Secrets.hide(HtmlReport.page(commandLine, htmlSections), urls),
                        StandardCharsets.UTF_8);
                out.println("HTML report: " + html);
            } catch (IOException e) {
                err.println("baton check: cannot write " + html + ": " + e.getMessage());
            }
        }
        return status(results);
    }

    /** {@code --via-cli}: see {@link CliScenario}. */
    private int viaCli(boolean quick) throws Exception {
        Duration leaseTime = lease != null ? Durations.parse("--lease", lease) : Duration.ofSeconds(quick ? 1 : 2);
        Duration runTime = duration != null ? Durations.parse("--duration", duration) : Duration.ofSeconds(quick ? 12 : 60);
        if (leaseTime.toMillis() < 200) {
            throw new IllegalArgumentException("--lease: at least 200ms, was " + lease);
        }
        if (!strategy.equals("lease") && !strategy.equals("session")) {
            throw new IllegalArgumentException("--via-cli: --strategy lease or session (what baton run offers), was "
                    + strategy);
        }
        int n = workers != null ? workers : 3;
        int k = locks != null ? locks : 1;
        if (n < 2 || n > 16) {
            throw new IllegalArgumentException("--workers: 2 to 16 with --via-cli, was " + n);
        }
        if (k < 1 || k > 64) {
            throw new IllegalArgumentException("--locks: 1 to 64, was " + k);
        }
        List<String> kinds = faults != null ? List.copyOf(new LinkedHashSet<>(faults))
                : CliScenario.DEFAULT_FAULTS;
        for (String f : kinds) {
            if (!CliScenario.FAULTS.contains(f)) {
                throw new IllegalArgumentException("--faults: unknown fault '" + f + "' with --via-cli; use "
                        + String.join(", ", CliScenario.FAULTS));
            }
        }
        if (kinds.contains("failover") && !allowFailover) {
            throw new IllegalArgumentException(FAILOVER_NOT_ALLOWED);
        }
        if (json != null) {
            throw new IllegalArgumentException("--json: not written with --via-cli yet; its tables are on standard output");
        }
        if (html != null) {
            throw new IllegalArgumentException("--html: not written with --via-cli yet; its tables are on standard output");
        }
        if (!Pool.byId(pool).equals(Pool.DEFAULT)) {
            throw new IllegalArgumentException("--pool: baton run has no pool to choose; leave --pool out with --via-cli");
        }
        CheckStrategy strat = Strategies.byName(strategy);
        for (String u : urls) {
            if (RedisStrategy.isRedis(u) || ZooKeeperStrategy.isZooKeeper(u)) {
                throw new IllegalArgumentException("--via-cli runs its baton run workers on SQL databases (jdbc: URLs)"
                        + " only, not on " + (RedisStrategy.isRedis(u) ? "Redis" : "ZooKeeper") + " ('" + u + "'):"
                        + " check it without --via-cli (the worker mode, whose faults include failover with"
                        + " --allow-failover), or give --via-cli a PostgreSQL, MariaDB, MySQL or SQLite URL");
            }
            strat.validate(u);
            if (kinds.contains("failover")) {
                Failover.of(u).requireProcesses();
            }
        }
        long baseSeed = seed != null ? seed : System.nanoTime() & 0xFFFFFF;
        Path dir = workDir != null ? workDir : Path.of(System.getProperty("java.io.tmpdir"),
                "baton-check-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        out.println("baton check --via-cli: strategy " + strategy + ", " + n + " workers (baton run processes), " + k
                + " locks, lease " + leaseTime.toMillis() + " ms, " + runTime.toSeconds() + " s per scenario, seed "
                + baseSeed + ", logs in " + dir);
        List<CliScenario.Result> results = new ArrayList<>();
        int i = 0;
        for (String u : urls) {
            for (String f : kinds) {
                CliScenario.Spec s = new CliScenario.Spec(strategy, u, table, n, k, leaseTime, runTime, f, baseSeed + i,
                        dir.resolve(i + "-cli-" + f), Fence.STRICT, false, quick ? 1 : 5);
                i++;
                CliScenario.Result r = new CliScenario(s).run();
                results.add(r);
                out.print(Secrets.hide(CliScenario.block(r), urls));
                out.flush();
            }
        }
        out.println();
        out.println("command: " + commandLine);
        out.print(Secrets.hide(CliScenario.summary(results), urls));
        if (results.stream().anyMatch(r -> r.verdict().equals("FAIL"))) {
            return FAIL;
        }
        return results.stream().anyMatch(r -> r.verdict().equals("INCONCLUSIVE")) ? INCONCLUSIVE : PASS;
    }

    /** The URLs given, or none before they were parsed. */
    private List<String> urls() {
        return urls != null ? urls : List.of();
    }

    static int status(List<Analysis.Result> results) {
        if (results.stream().anyMatch(r -> r.verdict().equals("FAIL"))) {
            return FAIL;
        }
        if (results.stream().anyMatch(r -> r.verdict().equals("INCONCLUSIVE"))) {
            return INCONCLUSIVE;
        }
        return PASS;
    }
}
