package dev.baton.cli;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.LockException;
import dev.baton.LockInterruptedException;
import dev.baton.LockLostException;
import dev.baton.LockNames;
import dev.baton.LockTimeoutException;
import dev.baton.jdbc.Strategy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code baton run}: runs a command while holding a lock.
 *
 * <ol>
 *   <li>Acquire the lock, waiting at most {@code --wait} (default: as long as it takes).</li>
 *   <li>Start the command with standard input, output and error inherited, and {@code BATON_LOCK} and
 *       {@code BATON_FENCING_TOKEN} in its environment. The library renews the lease while it runs.</li>
 *   <li>SIGINT and SIGTERM received meanwhile are passed on to the command.</li>
 *   <li>When the command ends, release the lock and exit with its status. If the lease is lost first, send
 *       the command SIGTERM, SIGKILL after {@code --grace}, and exit 76.</li>
 * </ol>
 */
@Command(name = "run", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        headerHeading = "%n", header = "Run a command while holding a lock.",
        description = {
                "Acquires the lock, runs COMMAND with BATON_LOCK and BATON_FENCING_TOKEN in its environment,"
                        + " renews the lease while it runs, releases the lock when it ends and exits with"
                        + " its status. SIGINT and SIGTERM are passed on to the command. If the lease is lost,"
                        + " the command gets SIGTERM (SIGKILL after --grace) and baton exits 76.",
                "The lock table is created in the database if it is missing.",
                "Durations: 500ms, 10s, 2m, 1h, or 0."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {
                "N:the command's status (128+signal if a signal ended it)",
                "64:bad arguments",
                "69:database unreachable",
                "75:lock not acquired within --wait",
                "76:lease lost while the command ran",
                "126/127:the command could not be started / was not found"})
final class RunCommand implements java.util.concurrent.Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(RunCommand.class);

    /** The smallest lease the library accepts. */
    static final Duration MIN_LEASE = Duration.ofMillis(100);

    @Spec
    CommandSpec spec;

    @Option(names = "--lock", required = true, paramLabel = "NAME", description = "Lock name.")
    String lockName;

    @Option(names = "--wait", paramLabel = "DURATION", converter = Durations.Converter.class,
            description = "How long to wait for the lock; 0 tries once. Default: until acquired.")
    Duration wait;

    @Option(names = "--strategy", paramLabel = "lease|session", defaultValue = "lease",
            converter = StrategyConverter.class,
            description = {"lease (default): a row with an expiry by the database clock, renewed while the command"
                    + " runs; works on every database and through any pooler.",
                    "session: a PostgreSQL advisory lock or MySQL/MariaDB GET_LOCK held by this process's database"
                    + " session; freed by the server the moment that session ends (no lease to wait out); needs a"
                    + " direct connection; not on SQLite."})
    Strategy strategy;

    @Option(names = "--lease", paramLabel = "DURATION", converter = Durations.Converter.class,
            defaultValue = "10s", description = "Lease time, renewed while the command runs"
            + " (default ${DEFAULT-VALUE}, at least 100ms). Bounds how long a crashed baton keeps the lock.")
    Duration lease;

    @Option(names = "--grace", paramLabel = "DURATION", converter = Durations.Converter.class,
            defaultValue = "10s", description = "After a lost lease, time between SIGTERM and SIGKILL"
            + " (default ${DEFAULT-VALUE}).")
    Duration grace;

    @Mixin
    DatabaseOptions database;

    @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments"
            + " (put -- before it).")
    List<String> command;

    @Override
    public Integer call() {
        try {
            LockNames.validate(lockName);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "invalid --lock: " + e.getMessage());
        }
        if (lease.compareTo(MIN_LEASE) < 0) {
            throw new ParameterException(spec.commandLine(), "--lease must be at least 100ms, was "
                    + Durations.format(lease));
        }
        DatabaseUrl url = database.resolveUrl();
        PrintWriter err = spec.commandLine().getErr();
        try (SignalForwarder signals = SignalForwarder.install(Thread.currentThread())) {
            DatabaseOptions.OpenClient open;
            try {
                open = database.connect(url, lease, strategy);
            } catch (RuntimeException e) {
                if (signals.pendingName() == null) {
                    throw e;
                }
                Thread.interrupted();
                err.println("baton: " + signals.pendingName() + " while connecting to " + url.shown()
                        + "; the command was not run");
                return signals.pendingExitCode().orElse(130);
            }
            try (open) {
                return acquireAndRun(open, signals, err);
            }
        }
    }

    private int acquireAndRun(DatabaseOptions.OpenClient open, SignalForwarder signals, PrintWriter err) {
        DistributedLock lock = open.client().lock(lockName);
        log.debug("client {} on {}; acquiring '{}' (wait {}, lease {})", open.client().clientId(),
                open.client().backend(), lockName, wait == null ? "until acquired" : Durations.format(wait),
                Durations.format(lease));
        Lease held;
        try {
            held = wait == null ? lock.acquire() : lock.acquire(wait);
        } catch (LockTimeoutException e) {
            err.println("baton: " + notAcquired(e, open.client().backend()));
            return ExitCodes.NOT_ACQUIRED;
        } catch (LockInterruptedException e) {
            Thread.interrupted();
            err.println("baton: " + (signals.pendingName() != null ? signals.pendingName() : "interrupted")
                    + " while waiting for lock '" + lockName + "'; the command was not run");
            return signals.pendingExitCode().orElse(130);
        }
        int status = ExitCodes.SOFTWARE;
        try {
            status = runHolding(held, signals, err);
        } finally {
            release(held, err);
        }
        return status;
    }

    /**
     * "lock 'x' not acquired within 0 ms: held by host/123/abc#1 (token 7, lease ends in 9637 ms) on
     * jdbc-lease/sqlite (table baton_locks)": the wait as asked, then the holder as the backend reported it.
     */
    private String notAcquired(LockTimeoutException e, String backend) {
        StringBuilder line = new StringBuilder("lock '").append(lockName).append("' not acquired within ")
                .append(wait.toMillis()).append(" ms: held by ").append(e.holder().orElse("another client"));
        if (e.holderToken().isPresent()) {
            line.append(" (token ").append(e.holderToken().getAsLong());
            e.holderRemaining().ifPresent(r -> line.append(", lease ends in ").append(r.toMillis()).append(" ms"));
            line.append(')');
        }
        return line.append(" on ").append(backend).toString();
    }

    /** Releases the lock; a failure is reported but does not replace the command's status. */
    private void release(Lease held, PrintWriter err) {
        try {
            held.close();
        } catch (LockException e) {
            err.println("baton: could not release lock '" + lockName + "' (it ends on the server when its lease"
                    + " runs out): " + e.getMessage());
        }
    }

    private int runHolding(Lease held, SignalForwarder signals, PrintWriter err) {
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        held.onLost(lost::complete);
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        pb.environment().put("BATON_LOCK", lockName);
        pb.environment().put("BATON_FENCING_TOKEN", Long.toString(held.fencingToken()));
        if (lost.isDone()) {
            err.println("baton: lease on lock '" + lockName + "' was lost before the command started; not running"
                    + " it: " + lost.join().getMessage());
            return ExitCodes.LEASE_LOST;
        }
        Process child;
        try {
            child = pb.start();
        } catch (IOException e) {
            boolean notFound = String.valueOf(e.getMessage()).contains("error=2,");
            err.println("baton: cannot run '" + command.get(0) + "': " + e.getMessage());
            return notFound ? ExitCodes.NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
        }
        log.debug("acquired '{}' with fencing token {} as {}; started pid {}: {}", lockName, held.fencingToken(),
                held.holderId(), child.pid(), command);
        signals.attach(child);
        Thread.interrupted(); // a signal before attach was passed on; the waiting below must not see it
        CompletableFuture.anyOf(child.onExit(), lost).join();
        if (lost.isDone() && child.isAlive()) {
            LockLostException why = lost.join();
            err.println("baton: lease on lock '" + lockName + "' was lost while the command ran; stopping it"
                    + " (pid " + child.pid() + ", SIGTERM, SIGKILL after " + Durations.format(grace) + "): "
                    + why.getMessage());
            err.flush();
            stop(child);
            return ExitCodes.LEASE_LOST;
        }
        int status = waitFor(child);
        log.debug("pid {} exited with status {}; releasing '{}'", child.pid(), status, lockName);
        if (lost.isDone()) {
            err.println("baton: lease on lock '" + lockName + "' was lost as the command ended (status " + status
                    + "): " + lost.join().getMessage());
            return ExitCodes.LEASE_LOST;
        }
        return status;
    }

    /** SIGTERM, then SIGKILL to the command and what it started if it is still running after the grace. */
    private void stop(Process child) {
        child.destroy();
        try {
            if (!child.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                List<ProcessHandle> descendants = child.descendants().toList();
                child.destroyForcibly();
                descendants.forEach(ProcessHandle::destroyForcibly);
                child.waitFor();
            }
        } catch (InterruptedException e) {
            child.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static int waitFor(Process child) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return child.waitFor();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
