package dev.baton.cli;

import com.zaxxer.hikari.pool.HikariPool;
import dev.baton.LockBackendException;
import dev.baton.LockException;
import dev.baton.LockInterruptedException;
import dev.baton.checker.CheckCommand;
import dev.baton.internal.Secrets;
import dev.baton.spi.Causes;
import io.lettuce.core.RedisConnectionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Calendar;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * The {@code baton} command: {@code baton run} runs a command while holding a distributed lock;
 * {@code status}, {@code list}, {@code release} and {@code purge} are the operator's view and levers;
 * {@code check} is the fault-injection checker; {@code version} and {@code completion}. Errors are one line on standard error starting {@code baton: }, with
 * a stack trace only under {@code --verbose}; see {@link ExitCodes} for the statuses.
 *
 * <p>{@link #execute(String...)} runs the command in-process and returns the exit status;
 * {@link #main} configures logging, runs it and exits with that status.
 */
@Command(name = "baton", mixinStandardHelpOptions = true, versionProvider = Version.class,
        usageHelpAutoWidth = true,
        header = "Run commands under distributed locks kept in a database, Redis or ZooKeeper.",
        description = {"With no --url and no $BATON_URL, locks live in the embedded SQLite file"
                + " ~/.baton/baton.db, shared by every process on this host. A jdbc:postgresql:, jdbc:mariadb:"
                + " or jdbc:mysql: URL, a Redis URL (redis://, rediss://, redis-sentinel://…#MASTER) or a"
                + " zookeeper:// URL shares them across hosts. 'baton run' creates its lock table if missing;"
                + " no other command creates anything."},
        exitCodeListHeading = "%nExit status (each command's --help lists its own):%n",
        exitCodeList = {"0:success (status: held)",
                "1:status: free; release: nothing released (--waiter: no such place in line)",
                "2:status: free, but kept for the head of its line",
                "64:bad arguments, or an unsupported or malformed URL (checked before any connection)",
                "66:no lock table (or SQLite file) where list/status/release/purge looked",
                "69:database unreachable, or a database error",
                "70:internal error: a bug in baton (please report it with the --verbose output)",
                "75:run: lock not acquired within --wait", "76:run: lease lost while the command ran",
                "77:server refused: credentials, unknown database or ZooKeeper chroot, permission (a ZooKeeper"
                        + " ACL, Redis NOAUTH/WRONGPASS/NOPERM), read-only SQLite file"})
public final class BatonCommand implements Callable<Integer> {
    private static final String LOG_PREFIX = "org.slf4j.simpleLogger.";
    /** The library's words for its settings, said as the CLI's options (applied in this order). */
    private static final List<Map.Entry<String, String>> CLI_WORDS = List.of(
            Map.entry("Strategy.LEASE", "--strategy lease"),
            Map.entry("Strategy.SESSION", "--strategy session"),
            Map.entry(", or call createTableIfMissing() on the builder", ", or let 'baton run' create them"),
            Map.entry("; choose .dialect(Dialect.MYSQL) explicitly", ""),
            Map.entry("tableName '", "--table '"),
            Map.entry("leaseTime", "--lease"),
            Map.entry("olderThan", "--older-than"),
            Map.entry("call allowUnflushedCommits() on the builder to accept that",
                    "add --allow-unflushed-commits to accept that"),
            Map.entry("allowEviction() on the builder", "--allow-eviction"),
            Map.entry("allowEviction() skips", "--allow-eviction skips"));

    /**
     * The subcommands, in the order the usage lists them. Building a subcommand's model (picocli reads its
     * annotations by reflection) is most of a short command's start-up, so a command line that names one
     * ({@code baton run …}) gets only that one: {@link #commandLine(PrintWriter, PrintWriter, String...)}.
     */
    private static final class Subcommands {
        /**
         * In a class of its own, made only when picocli runs: the method references name picocli's classes
         * (HelpCommand, Version's IVersionProvider), Java 5 class files that the class-data archive cannot hold,
         * and which {@code baton run}'s way around picocli then never loads from the jar.
         */
        static final Map<String, Supplier<Object>> ALL = subcommands();
    }

    /** Subcommands that need every sibling: help lists them, completion scripts them. */
    private static final Set<String> NEEDS_ALL = Set.of("help", "completion");

    @Spec
    CommandSpec spec;

    /** Picocli instantiates this; use {@link #execute(String...)}. */
    public BatonCommand() {
    }

    /** Without a subcommand: print the usage and exit 64. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    /** Configures logging, runs the command and exits with its status. */
    public static void main(String[] args) {
        // first: java.util.logging reads its configuration when first used, by any thread
        configureLogging(isVerbose(args), args.length > 0 && args[0].equals("check"));
        if (args.length > 0 && args[0].equals("run")) {
            WarmUp.forUrl(runUrl(args, System.getenv())).ifPresent(Thread::start);
        }
        System.exit(execute(args));
    }

    /**
     * The URL a {@code baton run} command line names ({@code --url URL} or {@code --url=URL} before the command),
     * else {@value DatabaseUrl#ENV} in {@code env}, else null (the embedded SQLite file): a first look, for
     * {@link WarmUp} only.
     */
    static String runUrl(String[] args, Map<String, String> env) {
        for (int i = 1; i < args.length && !args[i].equals("--"); i++) {
            if (args[i].equals("--url") && i + 1 < args.length) {
                return args[i + 1];
            }
            if (args[i].startsWith("--url=")) {
                return args[i].substring("--url=".length());
            }
        }
        String fromEnv = env.get(DatabaseUrl.ENV);
        return fromEnv == null || fromEnv.isBlank() ? null : fromEnv;
    }

    /**
     * Work a {@code baton run} call would do on its path, done first on a daemon thread while the main thread
     * parses and sets up (on two cores the call then mostly finds it done). Only the JDK's own classes are touched,
     * which are made to be initialised from any thread; the call finds the results cached, or waits for what this
     * thread has not finished.
     *
     * <ul>
     *   <li>SQLite, PostgreSQL: the default locale's calendar data. The first {@link Calendar} of a JVM loads it
     *       from the locale provider (tens of milliseconds of CPU), and the SQLite driver's date format and the
     *       PostgreSQL driver's first connection each build one.</li>
     *   <li>PostgreSQL, MariaDB/MySQL (through HikariCP): the JDK's proxy class for {@link Connection}, which the
     *       pool generates (from the interface's several hundred methods) the first time it closes a
     *       connection, and the JDK caches for every later request.</li>
     * </ul>
     */
    static final class WarmUp extends Thread {
        private final boolean calendar;
        private final boolean connectionProxy;

        WarmUp(boolean calendar, boolean connectionProxy) {
            super("baton-warm-up");
            setDaemon(true);
            this.calendar = calendar;
            this.connectionProxy = connectionProxy;
        }

        /** The warm-up for a call on this URL (null: the embedded SQLite file); empty for Redis and ZooKeeper. */
        static Optional<WarmUp> forUrl(String url) {
            boolean sqlite = url == null || url.startsWith("jdbc:sqlite:");
            boolean postgres = url != null && url.startsWith("jdbc:postgresql:");
            boolean mariaDb = url != null && (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:"));
            return sqlite || postgres || mariaDb
                    ? Optional.of(new WarmUp(sqlite || postgres, postgres || mariaDb)) : Optional.empty();
        }

        @Override
        public void run() {
            if (calendar) {
                Calendar.getInstance();
            }
            if (connectionProxy) {
                Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                        new Unused());
            }
        }

        /** The handler of a proxy that is never called. */
        private static final class Unused implements InvocationHandler {
            @Override
            public Object invoke(Object proxy, Method method, Object[] args) {
                throw new UnsupportedOperationException(method.getName());
            }
        }
    }

    /**
     * Runs the command in this process, writing to {@link System#out} and {@link System#err}, and returns the
     * exit status instead of exiting.
     */
    public static int execute(String... args) {
        return execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    /** Runs the command in this process with the given output and error writers; returns the exit status. */
    static int execute(PrintWriter out, PrintWriter err, String... args) {
        RunCommand run = RunFastPath.parse(args);
        if (run != null) {
            return runWithoutPicocli(run, out, err, args);
        }
        CommandLine cli = commandLine(out, err, args);
        int status = cli.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    /** {@code baton run} as {@link RunFastPath} read it: called, and its failures reported, as picocli would. */
    private static int runWithoutPicocli(RunCommand run, PrintWriter out, PrintWriter err, String... args) {
        run.errWriter = err;
        int status;
        try {
            status = run.call();
        } catch (Exception e) {
            status = failure(e, err, run.database.resolved(), List.of(args), run.database.verbose);
        }
        out.flush();
        err.flush();
        return status;
    }

    /** The command line with every subcommand and handler, writing to the given writers. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        return commandLine(out, err, new String[0]);
    }

    /**
     * The command line for these arguments, writing to the given writers: when the first argument names a
     * subcommand (other than {@code help} and {@code completion}), only that subcommand is built; otherwise
     * all are, so that usage, suggestions for a mistyped name and completion see every one.
     */
    static CommandLine commandLine(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new BatonCommand());
        String first = args.length > 0 ? args[0] : "";
        boolean one = Subcommands.ALL.containsKey(first) && !NEEDS_ALL.contains(first);
        Subcommands.ALL.forEach((name, command) -> {
            if (!one || name.equals(first)) {
                cli.addSubcommand(name, command.get());
            }
        });
        CommandLine checkCli = cli.getSubcommands().get("check");
        if (checkCli != null) {
            // one version for every command, read from the build (the checker's own annotation spells one)
            CommandSpec check = checkCli.getCommandSpec();
            check.versionProvider(new Version());
            // ~/ in a SQLite URL is the home directory here too, as for every other command
            OptionSpec checkUrl = check.findOption("--url");
            check.remove(checkUrl);
            check.addOption(OptionSpec.builder(checkUrl)
                    .converters(BatonCommand::checkUrl).build());
        }
        cli.setOut(out);
        cli.setErr(err);
        CommandLine run = cli.getSubcommands().get("run");
        if (run != null) {
            run.setStopAtPositional(true);
        }
        cli.setParameterExceptionHandler(BatonCommand::usageError);
        cli.setExecutionExceptionHandler(BatonCommand::failure);
        return cli;
    }

    private static Map<String, Supplier<Object>> subcommands() {
        Map<String, Supplier<Object>> all = new LinkedHashMap<>();
        all.put("run", RunCommand::new);
        all.put("status", StatusCommand::new);
        all.put("list", ListCommand::new);
        all.put("release", ReleaseCommand::new);
        all.put("purge", PurgeCommand::new);
        all.put("check", CheckCommand::new);
        all.put("version", Version::new);
        all.put("completion", CompletionCommand::new);
        all.put("help", CommandLine.HelpCommand::new);
        return all;
    }

    /**
     * A {@code baton check --url}: {@code ~/} expanded, and a URL of a backend the CLI knows checked as every other
     * command checks it ({@link UrlChecks}); a URL of another scheme is left to the strategy that takes it.
     */
    private static String checkUrl(String value) {
        String url = DatabaseUrl.expandHome(value, DatabaseOptions.home());
        String lower = url.toLowerCase(java.util.Locale.ROOT);
        if (lower.startsWith("jdbc:postgresql:") || lower.startsWith("jdbc:mariadb:") || lower.startsWith("jdbc:mysql:")
                || lower.startsWith("redis") || lower.startsWith("zookeeper:")) {
            try {
                DatabaseUrl.parse(url, "--url");
            } catch (BatonFailure f) {
                throw new CommandLine.TypeConversionException(f.getMessage());
            }
        }
        return url;
    }

    private static int usageError(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        err.println("baton: " + Secrets.hide(oneLine(e.getMessage()), urlsIn(List.of(args))) + " (see '" + name
                + " --help')");
        return ExitCodes.USAGE;
    }

    private static int failure(Exception e, CommandLine cmd, ParseResult parsed) {
        return failure(e, cmd.getErr(), databaseUrl(cmd), parsed.originalArgs(), isVerbose(parsed));
    }

    /**
     * Reports a command's failure as one line on {@code err} (with the stack trace if verbose) and returns its
     * exit status.
     *
     * @param url  the database the command resolved, if it did
     * @param args the command line, whose URLs' secrets are never printed
     */
    private static int failure(Exception e, PrintWriter err, Optional<DatabaseUrl> url, List<String> args,
                               boolean verbose) {
        int status;
        String message;
        BatonFailure database = url.isPresent() && isDatabaseFailure(e) ? DatabaseErrors.failure(url.get(), e) : null;
        if (e instanceof BatonFailure f) {
            status = f.exitCode();
            message = f.getMessage();
        } else if (e instanceof IllegalArgumentException) {
            status = ExitCodes.USAGE;
            message = e.getMessage();
        } else if (e instanceof LockInterruptedException) {
            status = 130;
            message = e.getMessage();
        } else if (database != null) {
            status = database.exitCode();
            message = database.getMessage();
        } else if (e instanceof LockException || isDatabaseFailure(e)) {
            status = ExitCodes.UNAVAILABLE;
            message = isConnectionFailure(e) && !(e instanceof LockException)
                    ? "cannot reach the server (unreachable): " + e.getMessage() : e.getMessage();
        } else {
            status = ExitCodes.SOFTWARE;
            message = "internal error (a bug in baton: please report it with the output of --verbose): "
                    + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
        }
        List<String> urls = urlsIn(args);
        String line = Secrets.hide(cliWords(oneLine(message)), urls);
        if (url.isPresent()) {
            line = url.get().scrub(line);
        }
        err.println("baton: " + line);
        if (verbose) {
            // a driver's message may repeat the URL: the trace gets the same scrubbing as the line above
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            String text = Secrets.hide(trace.toString(), urls);
            err.print(url.isPresent() ? url.get().scrub(text) : text);
        } else if (status == ExitCodes.SOFTWARE) {
            err.println("baton: run again with --verbose for the stack trace");
        }
        err.flush();
        return status;
    }

    /**
     * The URLs this command line and its environment name ({@code --url X}, {@code --url=X}, {@value
     * DatabaseUrl#ENV}), whose secrets no printed line may contain.
     */
    static List<String> urlsIn(List<String> args) {
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--")) {
                break;
            }
            if (a.equals("--url") && i + 1 < args.size()) {
                urls.add(args.get(i + 1));
            } else if (a.startsWith("--url=")) {
                urls.add(a.substring("--url=".length()));
            }
        }
        String env = System.getenv(DatabaseUrl.ENV);
        if (env != null && !env.isBlank()) {
            urls.add(env);
        }
        return urls;
    }

    private static boolean isDatabaseFailure(Throwable e) {
        return e instanceof LockBackendException || e instanceof HikariPool.PoolInitializationException
                || Causes.root(e) instanceof SQLException || isConnectionFailure(e);
    }

    /** A client library's own connection failure ({@code baton check}'s connections raise them unwrapped). */
    private static boolean isConnectionFailure(Throwable e) {
        return Causes.any(e, t -> t instanceof ConnectException || t instanceof UnknownHostException
                || t instanceof RedisConnectionException);
    }

    /** The database the failing command was talking to, if it resolved one (found through its mixins). */
    private static Optional<DatabaseUrl> databaseUrl(CommandLine cmd) {
        for (CommandSpec mixin : cmd.getCommandSpec().mixins().values()) {
            if (mixin.userObject() instanceof DatabaseOptions options) {
                return options.resolved();
            }
        }
        return Optional.empty();
    }

    /** Replaces the Java names that library messages use for settings by the CLI's option names. */
    static String cliWords(String message) {
        String out = message;
        for (Map.Entry<String, String> w : CLI_WORDS) {
            out = out.replace(w.getKey(), w.getValue());
        }
        return out;
    }

    /** Collapses a driver's multi-line message onto one line. */
    static String oneLine(String message) {
        return message == null ? "(no message)" : message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    private static boolean isVerbose(ParseResult parsed) {
        for (ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.hasMatchedOption("--verbose")) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code --verbose} or {@code -v} appears among the options (before {@code --}). */
    static boolean isVerbose(String[] args) {
        for (String a : args) {
            if (a.equals("--")) {
                return false;
            }
            if (a.equals("--verbose") || a.equals("-v")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sets slf4j-simple's and java.util.logging's levels; must run before the first logger is created.
     * Default: no log lines at all, from Baton, HikariCP or the JDBC drivers (pgjdbc logs through
     * java.util.logging): {@code baton}'s stderr is its command's stderr, and what matters is reported as
     * {@code baton: } lines. Verbose: debug from Baton, info from the rest. Levels given with {@code -D} are
     * kept. {@code baton check} keeps its warnings.
     */
    static void configureLogging(boolean verbose) {
        configureLogging(verbose, false);
    }

    static void configureLogging(boolean verbose, boolean warnings) {
        String quiet = warnings ? "warn" : "off";
        setDefault(LOG_PREFIX + "defaultLogLevel", verbose ? "info" : quiet);
        setDefault(LOG_PREFIX + "log.dev.baton", verbose ? "debug" : quiet);
        setDefault(LOG_PREFIX + "log.dev.baton.lease-lost", verbose ? "debug" : warnings ? "error" : "off");
        setDefault(LOG_PREFIX + "log.com.zaxxer.hikari", verbose ? "info" : "off");
        // MariaDB Connector/J logs every server error at WARN; baton reports the one that matters as one line
        setDefault(LOG_PREFIX + "log.org.mariadb.jdbc", verbose ? "info" : "off");
        if (!verbose && !warnings && System.getProperty("java.util.logging.config.file") == null
                && System.getProperty("java.util.logging.config.class") == null) {
            // read when java.util.logging is first used (by pgjdbc, say), not set up now: most calls never use it
            System.setProperty("java.util.logging.config.class", QuietLogging.class.getName());
        }
        setDefault(LOG_PREFIX + "logFile", "System.err");
        if (verbose || warnings) {
            // only when something is logged: the logger builds its date format (and loads the locale's data,
            // tens of milliseconds) at start-up whenever one is set
            setDefault(LOG_PREFIX + "showDateTime", "true");
            setDefault(LOG_PREFIX + "dateTimeFormat", "HH:mm:ss.SSS");
        }
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
