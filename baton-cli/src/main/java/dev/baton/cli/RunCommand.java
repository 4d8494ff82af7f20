package dev.baton.cli;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockException;
import dev.baton.LockInfo;
import dev.baton.LockInterruptedException;
import dev.baton.LockLostException;
import dev.baton.LockNames;
import dev.baton.LockTimeoutException;
import dev.baton.NothingGrantedException;
import dev.baton.internal.Durations;
import dev.baton.internal.LeaseDeadlines;
import dev.baton.jdbc.Strategy;
import dev.baton.jdbc.StrategyConflictException;
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
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code baton run}: while the command, or anything it started, runs, it holds the lock; when the lock is
 * gone, the command is gone.
 *
 * <ol>
 *   <li>Acquire the lock, waiting at most {@code --wait} (default: as long as it takes), saying on stderr
 *       who holds it when it is taken, and again every minute (unless {@code --quiet}). An attempt that could not
 *       reach the server and so granted nothing ({@link NothingGrantedException}) does not end the wait: the
 *       library tries again until {@code --wait} has passed (exit 69 only if the server is still unreachable
 *       then; at once with {@code --wait 0}).</li>
 *   <li>Start the command in a process group of its own under a supervisor ({@link CommandGroup}) with
 *       standard input, output and error inherited, and {@code BATON_LOCK} and {@code BATON_FENCING_TOKEN}
 *       in its environment. The library renews the lease while it runs. If {@code baton} dies, even by
 *       SIGKILL, the supervisor kills the group.</li>
 *   <li>SIGINT, SIGTERM and SIGHUP received meanwhile are passed on to the group, once each. The first is a
 *       stop request: if the group has not ended {@code --grace} later, it gets SIGKILL, the lock is released
 *       and {@code baton} exits 128 + that signal's number.</li>
 *   <li>When the command ends, what it left in its group gets SIGTERM, SIGKILL after {@code --grace}. Then
 *       decide by the lease's validity at that moment ({@link Lease#checkValid()}, which asks the server):
 *       valid, release and exit with the command's status; lost, exit 76, unless the group ended before the
 *       lease's deadline, the loss was learned only after it ({@code baton} was stopped and saw the end late) and
 *       the server still shows the run's token (see {@link #endedWhileValid}), then the command's status. If the lease
 *       is lost first, SIGTERM the group, SIGKILL after {@code --grace}, and exit 76.</li>
 *   <li>Releasing and closing the pool take at most the lease time: past it the lock ends on the server by
 *       itself, so a dead network cannot hold {@code baton} up.</li>
 * </ol>
 */
@Command(name = "run", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        headerHeading = "%n", header = "Run a command while holding a lock.",
        description = {
                "Acquires the lock, runs COMMAND in a process group of its own with BATON_LOCK and"
                        + " BATON_FENCING_TOKEN in its environment, renews the lease while it runs, releases the"
                        + " lock when the command and everything it started have ended, and exits with the"
                        + " command's status. While the command (or anything it started) runs, baton holds the"
                        + " lock; when the lock is gone, the command is gone.",
                "SIGINT, SIGTERM and SIGHUP are passed on to the command's group once; if the group has not"
                        + " ended --grace later, it gets SIGKILL, the lock is released and baton exits 128 + the"
                        + " signal's number (129, 130, 143). If the lease is lost, the"
                        + " group gets SIGTERM (SIGKILL after --grace) and baton exits 76. What the command"
                        + " leaves running when it exits gets SIGTERM, SIGKILL after --grace. If baton is"
                        + " killed, even with SIGKILL, the group is killed.",
                "The lock table is created in the database if it is missing.",
                "Durations: 500ms, 10s, 2m, 1h, 1.5s, 1h30m, or a number of seconds (10, 0.5, 0)."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {
                "N:the command's status (128+signal if a signal ended it)",
                "64:bad arguments or URL, or a lock name used with the other --strategy in that table",
                "69:database unreachable (while waiting: still unreachable when --wait ended)",
                "70:internal error",
                "75:lock not acquired within --wait (or --conflict-exit-code)",
                "76:lease lost while the command ran (or --conflict-exit-code)",
                "77:server refused (credentials, unknown database or ZooKeeper chroot, permission,"
                        + " read-only SQLite file)",
                "129/130/143:SIGHUP/SIGINT/SIGTERM was passed on to the command's group, which had not ended"
                        + " --grace later and was killed",
                "126/127:the command could not be started / was not found"})
final class RunCommand implements java.util.concurrent.Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(RunCommand.class);

    /** The smallest lease the library accepts. */
    static final Duration MIN_LEASE = Duration.ofMillis(100);
    /**
     * The longest lease: the lease only bounds how long a crashed {@code baton} keeps the lock (a running
     * command's lease is renewed however long it runs), so a longer one buys nothing but a longer outage.
     */
    static final Duration MAX_LEASE = Duration.ofHours(24);
    /** The longest --wait: a year; leave --wait out to wait forever. */
    static final Duration MAX_WAIT = Duration.ofHours(24 * 366);
    /** The longest --grace. */
    static final Duration MAX_GRACE = Duration.ofHours(1);
    /** How often the waiting line is repeated. */
    static final Duration WAIT_NOTICE_EVERY = Duration.ofMinutes(1);
    /** Releasing waits for at most the lease time, but at least this long (a round trip on a busy host). */
    private static final Duration MIN_RELEASE_WAIT = Duration.ofSeconds(1);
    /** How long to wait for the supervisor after SIGKILL, beyond --grace, before giving up on it. */
    private static final Duration KILL_WAIT = Duration.ofSeconds(5);

    @Spec
    CommandSpec spec;

    @Option(names = "--lock", required = true, paramLabel = "NAME", description = "Lock name.")
    String lockName;

    @Option(names = {"-w", "--wait"}, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long to wait for the lock; 0 tries once. Default: until acquired.")
    Duration wait;

    @Option(names = {"-n", "--nonblock"}, description = "Try once, do not wait: --wait 0 (as flock -n).")
    boolean nonblock;

    @Option(names = "--strategy", paramLabel = "lease|session", defaultValue = "lease",
            converter = StrategyConverter.class,
            description = {"lease (default): a row with an expiry by the database clock, renewed while the command"
                    + " runs; works on every database and through any pooler.",
                    "session: a PostgreSQL advisory lock or MySQL/MariaDB GET_LOCK held by this process's database"
                    + " session; freed by the server the moment that session ends (no lease to wait out); needs a"
                    + " direct connection; not on SQLite."})
    Strategy strategy;

    @Option(names = "--lease", paramLabel = "DURATION", converter = DurationConverter.class,
            defaultValue = "10s", description = "Lease time, renewed while the command runs"
            + " (default ${DEFAULT-VALUE}, 100ms to 24h). Bounds how long a crashed baton keeps the lock.")
    Duration lease;

    @Option(names = "--grace", paramLabel = "DURATION", converter = DurationConverter.class,
            defaultValue = "10s", description = "Time between SIGTERM and SIGKILL when the lease is lost, after a"
            + " signal passed on to the command, and for what the command leaves running when it exits"
            + " (default ${DEFAULT-VALUE}, at most 1h).")
    Duration grace;

    @Option(names = "--conflict-exit-code", paramLabel = "N", description = "Exit with N (1-255) instead of 75"
            + " (not acquired) and 76 (lease lost), so they cannot be mistaken for the command's own status.")
    Integer conflictExitCode;

    @Option(names = {"-q", "--quiet"}, description = "Do not say on stderr that the lock is taken while waiting.")
    boolean quiet;

    @Mixin
    DatabaseOptions database;

    @Option(names = {"-c", "--command"}, paramLabel = "STRING", description = "Run STRING with sh -c (as flock"
            + " -c) instead of a COMMAND.")
    String shellCommand;

    @Parameters(arity = "0..*", paramLabel = "COMMAND", description = "The command and its arguments"
            + " (put -- before it), unless -c gives one.")
    List<String> command;

    /** Where {@link #call()} writes when it runs without picocli ({@link RunFastPath}); else the command line's. */
    PrintWriter errWriter;

    @Override
    public Integer call() {
        String invalid = invalid();
        if (invalid != null) {
            throw new ParameterException(spec.commandLine(), invalid);
        }
        if (nonblock) {
            wait = Duration.ZERO;
        }
        if (shellCommand != null) {
            command = List.of("sh", "-c", shellCommand);
        }
        DatabaseUrl url = database.resolveUrl();
        PrintWriter err = errWriter != null ? errWriter : spec.commandLine().getErr();
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
            boolean closed = false;
            try {
                Lease held;
                try {
                    held = acquire(open, signals, err);
                } catch (StrategyConflictException e) {
                    throw new BatonFailure(ExitCodes.USAGE, usedWithOtherStrategy(e), e);
                }
                if (held == null) {
                    return signals.pendingExitCode().orElse(conflict(ExitCodes.NOT_ACQUIRED));
                }
                int status = runHolding(open, held, signals, err);
                closed = true;
                return finish(open, held, status, err);
            } finally {
                if (!closed) {
                    open.close();
                }
            }
        }
    }

    /** What is wrong with the options, as the usage error says it; null if nothing. */
    String invalid() {
        try {
            LockNames.validate(lockName);
        } catch (IllegalArgumentException e) {
            return "invalid --lock: " + e.getMessage();
        }
        if (lease.compareTo(MIN_LEASE) < 0) {
            return "--lease must be at least 100ms, was " + Durations.format(lease);
        }
        if (conflictExitCode != null && (conflictExitCode < 1 || conflictExitCode > 255)) {
            return "--conflict-exit-code must be 1 to 255, was " + conflictExitCode;
        }
        if (nonblock && wait != null) {
            return "-n (--nonblock) is --wait 0: give one of them";
        }
        boolean hasCommand = command != null && !command.isEmpty();
        if (shellCommand != null && hasCommand) {
            return "-c gives the command as one shell string; it takes no COMMAND after it, found '"
                    + command.get(0) + "'";
        }
        if (shellCommand == null && !hasCommand) {
            return "Missing required parameter: 'COMMAND' (or -c 'shell command')";
        }
        try {
            Durations.requireAtMost("--lease", lease, MAX_LEASE, "it only bounds how long a crashed baton keeps"
                    + " the lock; a running command's lease is renewed however long it runs");
            Durations.requireAtMost("--wait", wait, MAX_WAIT, "leave --wait out to wait until acquired");
            Durations.requireAtMost("--grace", grace, MAX_GRACE, "the time a command gets to stop");
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        return null;
    }

    /**
     * "lock 'x' is used with --strategy session in table baton_locks, and one name is one lock: …": the
     * library's refusal in the CLI's words, with what the operator can do.
     */
    static String usedWithOtherStrategy(StrategyConflictException e) {
        String lock = "lock '" + Names.escape(e.lockName()) + "'";
        String other = e.usedWith() == Strategy.SESSION ? "--strategy session" : "--strategy lease";
        String freed = e.usedWith() == Strategy.SESSION
                ? "its claim there stays until its row is deleted from the table once nothing uses the name with "
                        + other
                : "its row there stays until 'baton purge' deletes it, some time after its last lease ended";
        return lock + " is used with " + other + " in table " + e.table() + ", and one name is one lock: run it"
                + " with " + other + ", or use another name (" + freed + ")";
    }

    private int conflict(int code) {
        return conflictExitCode != null ? conflictExitCode : code;
    }

    /**
     * Acquires the lock: one try, then (if taken) a line on stderr naming the holder and slices of at most a
     * minute, repeating the line after each, until acquired or {@code --wait} has passed.
     *
     * @return the lease, or null if not acquired (reported) or a signal arrived (reported, pending)
     */
    private Lease acquire(DatabaseOptions.OpenClient open, SignalForwarder signals, PrintWriter err) {
        DistributedLock lock = open.client().lock(lockName);
        String backend = open.client().backend();
        log.debug("client {} on {}; acquiring '{}' (wait {}, lease {})", open.client().clientId(), backend, lockName,
                wait == null ? "until acquired" : Durations.format(wait), Durations.format(lease));
        long start = System.nanoTime();
        try {
            // the last answer: the lock is busy, or (null) the server could not be asked and granted nothing
            LockTimeoutException busy = null;
            NothingGrantedException unreachable = null;
            try {
                return lock.acquire(Duration.ZERO);
            } catch (LockTimeoutException e) {
                busy = e;
            } catch (NothingGrantedException e) {
                if (wait != null && wait.isZero()) {
                    throw e;
                }
                unreachable = e; // the library keeps trying within each slice until it can ask the server
            }
            while (true) {
                Duration left = wait == null ? WAIT_NOTICE_EVERY
                        : wait.minusNanos(System.nanoTime() - start);
                if (left.isNegative() || left.isZero()) {
                    if (busy == null) {
                        throw unreachable;
                    }
                    err.println("baton: " + notAcquired(busy, open, backend));
                    return null;
                }
                if (!quiet) {
                    err.println("baton: waiting for lock '" + lockName + "': " + (busy != null
                            ? holder(busy, open) + " on " + backend
                            : "cannot ask the server now, trying again (" + unreachable.getMessage() + ")"));
                    err.flush();
                }
                Duration slice = left.compareTo(WAIT_NOTICE_EVERY) < 0 ? left : WAIT_NOTICE_EVERY;
                try {
                    return lock.acquire(slice);
                } catch (LockTimeoutException e) {
                    busy = e;
                } catch (NothingGrantedException e) {
                    busy = null; // the slice ended while the server could not be reached; nothing was granted
                    unreachable = e;
                }
            }
        } catch (LockInterruptedException e) {
            if (signals.pendingName() == null) {
                throw e;
            }
            Thread.interrupted();
            err.println("baton: " + signals.pendingName() + " while waiting for lock '" + lockName
                    + "'; the command was not run");
            return null;
        }
    }

    /**
     * "lock 'x' not acquired within 0 ms: held by host/123/abc#1 (token 7, lease ends in 9637 ms) on
     * jdbc-lease/sqlite (table baton_locks)": the wait as asked, then the holder as the backend reported it.
     */
    private String notAcquired(LockTimeoutException e, DatabaseOptions.OpenClient open, String backend) {
        return "lock '" + lockName + "' not acquired within " + wait.toMillis() + " ms: " + holder(e, open) + " on "
                + backend;
    }

    /**
     * "held by host/123/abc#1 (token 7, lease ends in 9637 ms)", as far as the backend said; when it named no holder,
     * a look at the lock tells whether it is free but kept for the head of its line: "free, kept for the head of its
     * line: host/456/def#1".
     */
    private String holder(LockTimeoutException e, DatabaseOptions.OpenClient open) {
        if (e.holder().isEmpty()) {
            try {
                Optional<LockInfo.Waiter> kept = open.client().list().stream()
                        .filter(l -> l.name().equals(lockName) && !ListCommand.isSession(l)).findFirst()
                        .flatMap(LockInfo::keptFor);
                if (kept.isPresent()) {
                    return "free, kept for the head of its line: " + Names.escape(kept.get().owner());
                }
            } catch (RuntimeException listing) {
                log.debug("could not look at lock '{}' to say who keeps it", lockName, listing);
            }
        }
        StringBuilder line = new StringBuilder("held by ").append(e.holder().orElse("another client"));
        if (e.holderToken().isPresent()) {
            line.append(" (token ").append(e.holderToken().getAsLong());
            e.holderRemaining().ifPresent(r -> line.append(", lease ends in ").append(r.toMillis()).append(" ms"));
            line.append(')');
        }
        return line.toString();
    }

    /**
     * Runs the command under the lease.
     *
     * @return the command's status, or {@link ExitCodes#LEASE_LOST} if the lease was lost while it ran
     */
    private int runHolding(DatabaseOptions.OpenClient open, Lease held, SignalForwarder signals, PrintWriter err) {
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        AtomicLong lostNoticed = new AtomicLong();
        held.onLost(e -> {
            lostNoticed.compareAndSet(0, System.nanoTime() | 1); // never 0: 0 is "not noticed"
            lost.complete(e);
        });
        if (lost.isDone()) {
            err.println("baton: lease on lock '" + lockName + "' was lost before the command started; not running"
                    + " it: " + lost.join().getMessage());
            return ExitCodes.LEASE_LOST;
        }
        CommandGroup group;
        try {
            group = CommandGroup.start(command, Map.of("BATON_LOCK", lockName,
                    "BATON_FENCING_TOKEN", Long.toString(held.fencingToken())), grace);
        } catch (IOException e) {
            err.println("baton: cannot start '" + command.get(0) + "': its supervisor needs perl (Debian:"
                    + " perl-base) and mkfifo (coreutils): " + e.getMessage());
            return ExitCodes.CANNOT_EXECUTE;
        }
        Process supervisor = group.process();
        log.debug("acquired '{}' with fencing token {} as {}; started supervisor pid {}: {}", lockName,
                held.fencingToken(), held.holderId(), supervisor.pid(), command);
        signals.attach(group);
        Thread.interrupted(); // a signal before attach was passed on; the waiting below must not see it
        try {
            CompletableFuture<SignalForwarder.Stop> stop = signals.stopRequested();
            CompletableFuture.anyOf(supervisor.onExit(), lost, stop).join();
            SignalForwarder.Stop killedAfterStop = null;
            if (stop.isDone() && !lost.isDone() && supervisor.isAlive()) {
                killedAfterStop = awaitStop(group, lost, stop.join(), err);
            }
            if (lost.isDone() && supervisor.isAlive() && group.endedNanos().isPresent()) {
                // the group had ended before the loss was noticed (baton was stopped, say): the supervisor is
                // exiting; decide below as for any ended command
                log.debug("the lease on '{}' was noticed lost after the command's group ended", lockName);
            } else if (lost.isDone() && supervisor.isAlive()) {
                LockLostException why = lost.join();
                err.println("baton: lease on lock '" + lockName + "' was lost while the command ran; stopping its"
                        + " process group (SIGTERM, SIGKILL after " + Durations.format(grace) + "): "
                        + why.getMessage());
                err.flush();
                group.stop();
                awaitGroup(group, grace.plus(KILL_WAIT), err);
                return ExitCodes.LEASE_LOST;
            }
            int status = waitFor(supervisor);
            log.debug("the command's process group ended with status {}", status);
            LockLostException gone = validity(held);
            if (gone != null && endedWhileValid(group, held, lostNoticed, open)) {
                log.debug("the lease on '{}' is lost now, but the command's group ended before its deadline: {}",
                        lockName, gone.getMessage());
                gone = null;
            }
            if (gone != null) {
                err.println("baton: lease on lock '" + lockName + "' was lost while the command ran (it exited with"
                        + " status " + status + "): " + gone.getMessage());
                return ExitCodes.LEASE_LOST;
            }
            return killedAfterStop != null ? killedAfterStop.exitCode() : status;
        } finally {
            group.close();
        }
    }

    /**
     * A stop request (a signal passed on to the group): gives the group {@code --grace} to end, then SIGKILLs
     * it, as {@code timeout -k} does.
     *
     * @return the request if the group had to be killed, else null (it ended in time, or the lease was lost
     *         first: the caller handles that)
     */
    private SignalForwarder.Stop awaitStop(CommandGroup group, CompletableFuture<LockLostException> lost,
                                           SignalForwarder.Stop stop, PrintWriter err) {
        Process supervisor = group.process();
        try {
            CompletableFuture.anyOf(supervisor.onExit(), lost).get(grace.toNanos(), TimeUnit.NANOSECONDS);
            return null;
        } catch (TimeoutException e) {
            // the grace has passed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException("a future that is only ever completed normally failed", e);
        }
        if (!supervisor.isAlive()) {
            return null;
        }
        err.println("baton: " + stop.name() + " was passed on to the command's process group, which had not ended"
                + " after --grace " + Durations.format(grace) + "; killing it (SIGKILL)");
        err.flush();
        group.kill();
        awaitGroup(group, Duration.ZERO, err);
        return stop;
    }

    /** Waits for the group to end; SIGKILLs it if it has not by the timeout. */
    private static void awaitGroup(CommandGroup group, Duration timeout, PrintWriter err) {
        try {
            if (group.awaitExit(timeout) < 0) {
                group.kill();
                if (group.awaitExit(KILL_WAIT) < 0) {
                    err.println("baton: the command's supervisor (pid " + group.process().pid() + ") did not end"
                            + " within " + Durations.format(timeout.plus(KILL_WAIT)) + "; exiting without it");
                }
            }
        } catch (InterruptedException e) {
            group.kill();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Whether the command's group ended while the lease was valid, though it is lost now: {@code baton} was
     * stopped (SIGSTOP, a long GC pause) past the lease's deadline, or its renewals failed, and saw the end only
     * later. True if
     *
     * <ol>
     *   <li>the group ended (as the supervisor noted it, on a clock that kept counting while {@code baton} was
     *       stopped) before the lease's conservative local deadline, the end of the last grant or renewal the
     *       server confirmed, when the server still showed the grant by its own clock; and</li>
     *   <li>{@code baton} learned of the loss only at or after that deadline. A loss learned earlier means the
     *       server stopped showing the grant before it should have run out (force-released by an operator, taken
     *       over), at a moment {@code baton} cannot place relative to the command's end; and</li>
     *   <li>the server still shows this run's token on the lock ({@link #grantedToNobodySince}): nobody was granted
     *       it since. A loss {@code baton} learned late may have happened early (an operator's force release, a
     *       forward step of the server's clock while {@code baton} was stopped), and another holder's grant then
     *       may have come before the command ended; the times alone cannot tell.</li>
     * </ol>
     *
     * Unknown times (no {@code /proc/uptime}, a lease from elsewhere), or a server that shows nothing of the lock
     * (Redis, whose expired key leaves no trace), count as not ended in time.
     */
    private boolean endedWhileValid(CommandGroup group, Lease held, AtomicLong lostNoticed,
                                    DatabaseOptions.OpenClient open) {
        long checked = System.nanoTime();
        OptionalLong ended = group.endedNanos();
        OptionalLong deadline = LeaseDeadlines.deadlineNanos(held);
        if (ended.isEmpty() || deadline.isEmpty()) {
            return false;
        }
        long noticed = lostNoticed.get() != 0 ? lostNoticed.get() : checked;
        log.debug("the command's group ended {} ms before the lease's deadline; the loss was noticed {} ms after it",
                TimeUnit.NANOSECONDS.toMillis(deadline.getAsLong() - ended.getAsLong()),
                TimeUnit.NANOSECONDS.toMillis(noticed - deadline.getAsLong()));
        return ended.getAsLong() - deadline.getAsLong() < 0 && noticed - deadline.getAsLong() >= 0
                && grantedToNobodySince(open, held);
    }

    /**
     * Whether the server still shows {@code held}'s token on its lock, held or not: every grant draws a greater
     * token and writes it on the lock, so nobody was granted the lock since. False if the lock is not shown, shows
     * another token, or the server cannot be asked.
     */
    private boolean grantedToNobodySince(DatabaseOptions.OpenClient open, Lease held) {
        try {
            boolean same = open.client().list().stream()
                    .anyMatch(i -> i.name().equals(lockName) && i.fencingToken() == held.fencingToken());
            log.debug("the server shows token {} on '{}' still: {}", held.fencingToken(), lockName, same);
            return same;
        } catch (RuntimeException e) {
            log.debug("could not ask whether '{}' was granted since token {}", lockName, held.fencingToken(), e);
            return false;
        }
    }

    /**
     * The lease's validity now, after the command's group ended: null if valid, else why not.
     * {@link Lease#checkValid()} is exact: it asks the server whether it still shows this grant (lease
     * strategy: the row with this name, owner and token, unexpired by the server's clock; session strategy:
     * the lock held by the session that took it), so a grant taken over or force-released counts as lost
     * even before the local deadline passes. If the server cannot be asked, the local answer stands: the
     * local deadline ends no later than the server's.
     *
     * <p>The release after this can still find no matching grant (the lease ran out in between, say a
     * freeze after this check); that does not change the answer: the command had ended before the server
     * confirmed the grant, so it ran entirely under the lease.
     */
    private LockLostException validity(Lease held) {
        try {
            held.checkValid();
            return null;
        } catch (LockLostException e) {
            return e;
        } catch (LockBackendException e) {
            if (held.isValid()) {
                log.debug("could not confirm the lease on '{}' with the server; its local deadline has not passed",
                        lockName, e);
                return null;
            }
            return new LockLostException(lockName, held.fencingToken(), "its local deadline passed and the server"
                    + " could not be asked (" + e.getMessage() + ")");
        }
    }

    /**
     * Releases the lock and closes the client and pool, for at most the lease time (at least 1 s): past it,
     * the lock ends on the server by itself, so waiting longer on a dead network would only delay the exit.
     */
    private int finish(DatabaseOptions.OpenClient open, Lease held, int status, PrintWriter err) {
        Thread cleanup = new Thread(() -> {
            try {
                held.close();
            } catch (LockException e) {
                if (status != ExitCodes.LEASE_LOST) {
                    err.println("baton: could not release lock '" + lockName + "' (it ends on the server when its"
                            + " lease runs out): " + e.getMessage());
                }
            } catch (RuntimeException e) {
                log.debug("releasing '{}' failed", lockName, e);
            } finally {
                try {
                    open.close();
                } catch (RuntimeException e) {
                    // the process is ending; nothing to add for the user (--verbose logs it)
                    log.debug("closing the client failed", e);
                }
            }
        }, "baton-release");
        cleanup.setDaemon(true);
        // still running when the JVM exits: whatever it throws then is noise, never a stack trace on stderr
        cleanup.setUncaughtExceptionHandler((t, e) -> log.debug("{} failed", t.getName(), e));
        cleanup.start();
        try {
            cleanup.join(Math.max(MIN_RELEASE_WAIT.toMillis(), lease.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (cleanup.isAlive() && status != ExitCodes.LEASE_LOST) {
            err.println("baton: releasing lock '" + lockName + "' took longer than the lease ("
                    + Durations.format(lease) + "); exiting, it ends on the server when its lease runs out");
        }
        err.flush();
        return status == ExitCodes.LEASE_LOST ? conflict(ExitCodes.LEASE_LOST) : status;
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
