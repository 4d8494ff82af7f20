package dev.baton.cli;

import dev.baton.internal.Durations;
import dev.baton.jdbc.Strategy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code baton run} without picocli, for the command lines it is called with from cron and shell loops: building
 * picocli's model of the command (by reflection, in a fresh JVM) takes longer than everything else before the
 * lock is asked for. This reads the plain forms only — {@code run}, then each option of {@link RunCommand} and
 * its {@link DatabaseOptions} as {@code --name value}, {@code --name=value} or a lone short flag, then
 * {@code --} or the first word that is not an option, then the command — into the same fields picocli would
 * set. Anything else (help, a repeated, unknown or clustered option, a value that looks like an option or does
 * not convert, options the command refuses) returns null, and the command line goes through picocli, which
 * says what is wrong exactly as before. {@code RunFastPathTest} checks that both read the same.
 */
final class RunFastPath {
    private static final Set<String> FLAGS = Set.of("-n", "--nonblock", "-q", "--quiet", "-v", "--verbose",
            "--allow-unflushed-commits", "--allow-eviction");
    private static final Set<String> VALUED = Set.of("--lock", "-w", "--wait", "--strategy", "--lease", "--grace",
            "--conflict-exit-code", "-c", "--command", "--url", "--table");

    private RunFastPath() {
    }

    /** The command these arguments ask for, ready to call; null if picocli must read them. */
    static RunCommand parse(String[] args) {
        if (args.length < 2 || !args[0].equals("run")) {
            return null;
        }
        try {
            return read(Arrays.asList(args).subList(1, args.length));
        } catch (RuntimeException e) {
            return null; // a value that does not convert: picocli says what is wrong
        }
    }

    private static RunCommand read(List<String> args) {
        RunCommand run = new RunCommand();
        run.database = new DatabaseOptions();
        run.lease = Duration.ofSeconds(10);
        run.grace = Duration.ofSeconds(10);
        run.strategy = Strategy.LEASE;
        Set<String> seen = new HashSet<>();
        int i = 0;
        while (i < args.size()) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                i++;
                break;
            }
            if (!arg.startsWith("-") || arg.equals("-")) {
                break;
            }
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (!seen.add(canonical(name))) {
                return null;
            }
            if (FLAGS.contains(name) && value == null) {
                flag(run, name);
                i++;
                continue;
            }
            if (!VALUED.contains(name)) {
                return null;
            }
            if (value == null) {
                if (i + 1 >= args.size()) {
                    return null;
                }
                value = args.get(i + 1);
                if (value.startsWith("-")) {
                    return null; // picocli decides whether that is a value or a missing one
                }
                i += 2;
            } else {
                i++;
            }
            option(run, name, value);
        }
        List<String> command = new ArrayList<>(args.subList(i, args.size()));
        run.command = command.isEmpty() ? null : command;
        if (run.lockName == null || run.invalid() != null) {
            return null;
        }
        return run;
    }

    private static String canonical(String name) {
        return switch (name) {
            case "-n" -> "--nonblock";
            case "-q" -> "--quiet";
            case "-v" -> "--verbose";
            case "-w" -> "--wait";
            case "-c" -> "--command";
            default -> name;
        };
    }

    private static void flag(RunCommand run, String name) {
        switch (canonical(name)) {
            case "--nonblock" -> run.nonblock = true;
            case "--quiet" -> run.quiet = true;
            case "--verbose" -> run.database.verbose = true;
            case "--allow-unflushed-commits" -> run.database.allowUnflushedCommits = true;
            case "--allow-eviction" -> run.database.allowEviction = true;
            default -> throw new IllegalArgumentException(name);
        }
    }

    private static void option(RunCommand run, String name, String value) {
        switch (canonical(name)) {
            case "--lock" -> run.lockName = value;
            case "--wait" -> run.wait = Durations.parse(value);
            case "--strategy" -> run.strategy = switch (value.toLowerCase(Locale.ROOT)) {
                case "lease" -> Strategy.LEASE;
                case "session" -> Strategy.SESSION;
                default -> throw new IllegalArgumentException(value);
            };
            case "--lease" -> run.lease = Durations.parse(value);
            case "--grace" -> run.grace = Durations.parse(value);
            case "--conflict-exit-code" -> run.conflictExitCode = Integer.valueOf(value);
            case "--command" -> run.shellCommand = value;
            case "--url" -> run.database.url = value;
            case "--table" -> run.database.table = value;
            default -> throw new IllegalArgumentException(name);
        }
    }
}
