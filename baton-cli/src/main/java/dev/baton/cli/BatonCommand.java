package dev.baton.cli;

import com.zaxxer.hikari.pool.HikariPool;
import dev.baton.LockBackendException;
import dev.baton.LockException;
import dev.baton.LockInterruptedException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.sql.SQLException;
import java.util.concurrent.Callable;

/**
 * The {@code baton} command: {@code baton run} runs a command while holding a distributed lock,
 * {@code baton list} shows the locks. Errors are one line on standard error starting {@code baton: }, with
 * a stack trace only under {@code --verbose}; see {@link ExitCodes} for the statuses.
 *
 * <p>{@link #execute(String...)} runs the command in-process and returns the exit status;
 * {@link #main} configures logging, runs it and exits with that status.
 */
@Command(name = "baton", mixinStandardHelpOptions = true, version = "baton 0.1.0-SNAPSHOT",
        usageHelpAutoWidth = true,
        header = "Run commands under distributed locks kept in a database.",
        description = {"With no --url and no $BATON_URL, locks live in the embedded SQLite file"
                + " ~/.baton/baton.db, shared by every process on this host. A jdbc:postgresql:, jdbc:mariadb:"
                + " or jdbc:mysql: URL shares them across hosts. The CLI creates its lock table if missing.",
                "baton check --url URL … runs the fault-injection checker against a backend (docs/CHECKER.md)."},
        subcommands = {RunCommand.class, ListCommand.class, CommandLine.HelpCommand.class})
public final class BatonCommand implements Callable<Integer> {
    private static final String LOG_PREFIX = "org.slf4j.simpleLogger.";

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
        configureLogging(isVerbose(args), args.length > 0 && args[0].equals("check"));
        System.exit(execute(args));
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
        if (args.length > 0 && args[0].equals("check")) {
            // the fault-injection checker has its own command line (docs/CHECKER.md)
            return dev.baton.checker.CheckCommand.execute(out, err, java.util.Arrays.copyOfRange(args, 1, args.length));
        }
        CommandLine cli = new CommandLine(new BatonCommand());
        cli.setOut(out);
        cli.setErr(err);
        cli.getSubcommands().get("run").setStopAtPositional(true);
        cli.setParameterExceptionHandler(BatonCommand::usageError);
        cli.setExecutionExceptionHandler(BatonCommand::failure);
        int status = cli.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    private static int usageError(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        err.println("baton: " + oneLine(e.getMessage()) + " (see '" + name + " --help')");
        return ExitCodes.USAGE;
    }

    private static int failure(Exception e, CommandLine cmd, ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        int status;
        String message;
        if (e instanceof BatonFailure f) {
            status = f.exitCode();
            message = f.getMessage();
        } else if (e instanceof IllegalArgumentException) {
            status = ExitCodes.USAGE;
            message = e.getMessage();
        } else if (e instanceof LockInterruptedException) {
            status = 130;
            message = e.getMessage();
        } else if (e instanceof LockBackendException || e instanceof HikariPool.PoolInitializationException) {
            status = ExitCodes.UNAVAILABLE;
            message = "database unavailable: " + e.getMessage();
        } else if (e instanceof LockException) {
            status = ExitCodes.UNAVAILABLE;
            message = e.getMessage();
        } else if (rootCause(e) instanceof SQLException sql) {
            status = ExitCodes.UNAVAILABLE;
            message = "database error: " + sql.getMessage();
        } else {
            status = ExitCodes.SOFTWARE;
            message = "internal error: " + e;
        }
        err.println("baton: " + oneLine(message));
        if (isVerbose(parsed)) {
            e.printStackTrace(err);
        } else if (status == ExitCodes.SOFTWARE) {
            err.println("baton: run again with --verbose for the stack trace");
        }
        err.flush();
        return status;
    }

    private static Throwable rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
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
        if (!verbose && !warnings && System.getProperty("java.util.logging.config.file") == null) {
            java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.OFF);
        }
        setDefault(LOG_PREFIX + "logFile", "System.err");
        setDefault(LOG_PREFIX + "showDateTime", "true");
        setDefault(LOG_PREFIX + "dateTimeFormat", "HH:mm:ss.SSS");
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
