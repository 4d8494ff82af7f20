package dev.baton.checker;

import dev.baton.faultproxy.FaultProxy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * {@code baton check --via-cli}: one scenario in which every worker is a loop of real {@code baton run}
 * processes (the CLI's main class, {@value #BATON_MAIN}, on this JVM's class path, so the shaded jar works as
 * well as the module class path), each running {@code run-task.pl} (shipped with the checker): the command
 * works on the resource with {@code $BATON_FENCING_TOKEN} and starts a grandchild that reads the resource
 * too. The nemesis hits the {@code baton run} whose command is running:
 * <ul>
 *   <li>{@code pause-jvm}: SIGSTOP of the baton JVM only (1.5 × lease), the command runs on;</li>
 *   <li>{@code pause-tree}: SIGSTOP of the JVM, the supervisor, the command and its grandchild together;</li>
 *   <li>{@code kill}: SIGKILL of the baton JVM;</li>
 *   <li>{@code hup}: SIGHUP to baton (a closed terminal);</li>
 *   <li>{@code session-kill}: the server ends baton's sessions; {@code partition}: baton's connections go
 *       through a per-worker {@link FaultProxy} (blackhole, reset, drop-responses in turn);</li>
 *   <li>{@code kill-waiter}: SIGKILL of a baton JVM that waits in the line of a held lock (its place, as the
 *       backend lists it, names the JVM's pid), not the one whose command runs;</li>
 *   <li>{@code failover} (asked for by name only, with {@code --allow-failover}): the deployment's leader is lost
 *       and another takes its place ({@link Failover}) while a command runs; every {@code baton run} whose command
 *       runs then is marked hit by it, and one that loses its lease must stop its command and exit
 *       {@value #CONFLICT} like any other; the scenario goes on until a command began on the new leader.</li>
 * </ul>
 * Checks, on the history the resource and this process recorded (one clock):
 * <ol>
 *   <li><b>stale access</b>: an access by a command or grandchild whose token is lower than that of a grant
 *       on the same lock whose command had already begun. Refused by the fence: counted
 *       ({@code refusals}); accepted: a violation (a fence that admits everything turns every such access
 *       into one);</li>
 *   <li><b>lost update</b>: an accepted write that is not the previous accepted write + 1;</li>
 *   <li><b>exit status</b>: a {@code baton run} whose command (or grandchild) still accessed the resource
 *       after a later grant's command began lost its lease while its command ran: it must exit
 *       {@value #CONFLICT} (unless the nemesis killed it with SIGKILL);</li>
 *   <li><b>survivor</b>: a command or grandchild pid still alive {@link #SURVIVOR_BOUND} after the grace
 *       once its {@code baton run} exited (its {@code /proc/PID/cmdline} names the attempt, so a reused pid
 *       is not mistaken for it);</li>
 *   <li><b>dead waiter</b> (with {@code kill-waiter}): a lock listed free while a live {@code baton run} waits
 *       behind the place of a killed one is granted (its command's BEGIN) within the strategy's bound
 *       ({@link CheckStrategy#deadPlaceBound}) + {@link #MARGIN} ({@link DeadPlaces});</li>
 *   <li><b>after a failover</b> (with {@code failover}): a command begins within {@link #AFTER_FAILOVER} of the
 *       deployment being whole again.</li>
 * </ol>
 */
final class CliScenario {
    /** The CLI's main class, started by name: the checker module does not depend on the CLI. */
    static final String BATON_MAIN = "dev.baton.cli.BatonCommand";
    /** The exit status of a {@code baton run} that lost its lease (its default conflict code). */
    static final int CONFLICT = 76;
    /** The faults of this mode. */
    static final List<String> FAULTS = List.of("pause-jvm", "pause-tree", "kill", "hup", "session-kill",
            "partition", "kill-waiter", "failover", "none");
    /** The faults run when {@code --faults} is not given. */
    static final List<String> DEFAULT_FAULTS = List.of("pause-jvm", "pause-tree", "kill", "hup", "session-kill",
            "partition");
    /** Scheduling slack on the dead-waiter bound: {@code baton run} JVMs on a busy host. */
    static final Duration MARGIN = Duration.ofMillis(3000);
    /** How often the controller lists the locks with their lines during a {@code kill-waiter} scenario. */
    static final int LOOK_MS = 50;
    /** How long after {@code --grace} a process of a finished grant may take to be gone. */
    static final Duration SURVIVOR_BOUND = Duration.ofSeconds(2);
    static final Duration GRACE = Duration.ofMillis(500);
    /** How long after a failover the scenario waits for a command to begin on the new leader. */
    static final Duration AFTER_FAILOVER = Duration.ofSeconds(30);

    /**
     * One scenario.
     *
     * @param escape the positive control: the command's grandchild leaves with {@code setsid} and outlives it
     * @param minHits faults that must hit a running command for a PASS
     */
    record Spec(String strategy, String url, String table, int workers, int locks, Duration lease,
                Duration duration, String fault, long seed, Path workDir, Fence fence, boolean escape, int minHits) {
    }

    /** One {@code baton run}. */
    static final class Run {
        final int worker;
        final String attempt;
        final String lock;
        final long started;
        volatile long commandPid = -1;
        volatile long grandchildPid = -1;
        volatile long exited = -1;
        volatile int status = -1;
        volatile String fault; // the fault that hit it while its command ran, if any
        volatile List<Long> survivors = List.of();
        Process process;

        Run(int worker, String attempt, String lock, long started) {
            this.worker = worker;
            this.attempt = attempt;
            this.lock = lock;
            this.started = started;
        }
    }

    /** The outcome of one scenario. */
    record Result(Spec spec, String backend, int runs, int grants, int faults, int hits, int conflictExits,
                  int refusals, List<String> violations, List<String> notes, String verdict) {
    }

    private final Spec spec;
    private final List<Run> runs = new CopyOnWriteArrayList<>();
    private final Map<Long, Run> byPid = new java.util.concurrent.ConcurrentHashMap<>();
    private final List<DeadPlaces.Look> looks = new CopyOnWriteArrayList<>();
    private CheckStrategy strategy;
    private final Map<Integer, Run> current = new java.util.concurrent.ConcurrentHashMap<>();
    private final List<FaultProxy> proxies = new ArrayList<>();
    private final List<String> notes = new CopyOnWriteArrayList<>();
    private final List<Thread> checkers = new CopyOnWriteArrayList<>();
    /** Violations the nemesis saw: no command began on the new leader after a failover. */
    private final List<String> stuck = new CopyOnWriteArrayList<>();
    private volatile boolean stopping;
    private int faults;
    private int hits;
    private boolean stretched;
    private ResourceServer resource;
    private CheckBackend backend;
    private Path task;
    /** The next failover, its leader found before the target is chosen ({@link Failover#prepare}). */
    private Failover prepared;

    CliScenario(Spec spec) {
        this.spec = spec;
    }

    Result run() throws Exception {
        Files.createDirectories(spec.workDir());
        task = spec.workDir().resolve("run-task.pl");
        try (InputStream in = CliScenario.class.getResourceAsStream("run-task.pl")) {
            Files.copy(in, task, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        strategy = Strategies.byName(spec.strategy());
        strategy.validate(spec.url());
        backend = strategy.open(spec.url(), spec.table(), spec.lease());
        try (ResourceServer res = new ResourceServer(spec.fence())) {
            resource = res;
            Optional<String> na = notApplicable();
            if (na.isPresent()) {
                return new Result(spec, backend.shortName(), 0, 0, 0, 0, 0, 0, List.of(), List.of(na.get()),
                        "N/A");
            }
            Optional<InetSocketAddress> server = backend.serverAddress();
            for (int i = 0; i < spec.workers(); i++) {
                if (server.isPresent()) {
                    proxies.add(new FaultProxy(server.get()));
                }
            }
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < spec.workers(); i++) {
                int index = i;
                Thread t = new Thread(() -> workerLoop(index), "cli-worker-" + i);
                t.start();
                workers.add(t);
            }
            Thread looker = null;
            if (spec.fault().equals("kill-waiter")) {
                looker = new Thread(this::lookLoop, "cli-looker");
                looker.setDaemon(true);
                looker.start();
            }
            long end = System.nanoTime() + spec.duration().toNanos();
            nemesis(end);
            stopping = true;
            if (looker != null) {
                looker.join(5000);
            }
            proxies.forEach(FaultProxy::heal);
            for (Thread t : workers) {
                t.join(spec.lease().multipliedBy(10).toMillis() + 30_000);
                if (t.isAlive()) {
                    notes.add(t.getName() + " did not stop; its baton run is destroyed");
                    Run r = current.get(workers.indexOf(t));
                    if (r != null) {
                        r.process.destroyForcibly();
                    }
                    t.join(10_000);
                }
            }
            for (Thread t : checkers) {
                t.join();
            }
            return analyse(res.accesses());
        } finally {
            for (Run r : runs) {
                if (r.process != null) {
                    r.process.destroyForcibly();
                }
            }
            proxies.forEach(FaultProxy::close);
            backend.close();
        }
    }

    private Optional<String> notApplicable() {
        if (spec.fault().equals("partition") && backend.serverAddress().isEmpty()) {
            return Optional.of("partition needs a network backend");
        }
        if (spec.fault().equals("session-kill") && backend.serverAddress().isEmpty()) {
            return Optional.of("session-kill needs a server with sessions");
        }
        if (spec.fault().equals("session-kill") && backend.sessionKillUnsupported().isPresent()) {
            return Optional.of(backend.sessionKillUnsupported().get());
        }
        if (spec.fault().equals("kill-waiter") && strategy.deadPlaceBound(spec.lease()).isEmpty()) {
            return Optional.of("strategy " + spec.strategy() + " does not show its line of waiters: no waiter to aim at"
                    + " (the session strategy's waiters wait in the server, which drops a dead one with its session)");
        }
        return Optional.empty();
    }

    private void workerLoop(int index) {
        Random random = new Random(spec.seed() * 7919 + index * 104729L);
        long lease = spec.lease().toMillis();
        int n = 0;
        while (!stopping) {
            String attempt = "w" + index + "." + n++;
            String lock = "lock-" + random.nextInt(spec.locks());
            long hold1 = lease / 8 + random.nextInt((int) Math.max(1, lease / 2));
            long hold2 = lease / 8 + random.nextInt((int) Math.max(1, lease / 2));
            long life = spec.escape() ? GRACE.plus(SURVIVOR_BOUND).toMillis() + 3000 : hold1 + hold2;
            String url = proxies.isEmpty() ? spec.url() : backend.urlThroughProxy(proxies.get(index).port());
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> cmd = new ArrayList<>(List.of(java, "-XX:+UnlockDiagnosticVMOptions", "-XX:-DisplayVMOutput",
                    "-XX:TieredStopAtLevel=1", "-Xss512k", "-cp", System.getProperty("java.class.path"), BATON_MAIN,
                    "run", "--url", url, "--table", spec.table(), "--strategy", spec.strategy(), "--lock", lock,
                    "--lease", lease + "ms", "--wait", waitMillis() + "ms", "--grace",
                    GRACE.toMillis() + "ms", "--quiet", "--", "perl", task.toString(),
                    Integer.toString(resource.port()), lock, attempt, Long.toString(hold1), Long.toString(hold2),
                    spec.escape() ? "escape" : "wait", Long.toString(life)));
            Run run = new Run(index, attempt, lock, System.nanoTime());
            try {
                ProcessBuilder pb = new ProcessBuilder(cmd)
                        .redirectError(spec.workDir().resolve(attempt + ".err").toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
                run.process = pb.start();
            } catch (IOException e) {
                notes.add("cannot start baton run for " + attempt + ": " + e);
                return;
            }
            runs.add(run);
            byPid.put(run.process.pid(), run);
            current.put(index, run);
            // stdout is read on its own thread: a process that escaped the group may hold the pipe open long
            // after baton exited, and the exit time must be baton's
            Thread reader = new Thread(() -> readPids(run), "pids-" + attempt);
            reader.setDaemon(true);
            reader.start();
            try {
                run.status = run.process.waitFor();
                run.exited = System.nanoTime();
                reader.join(2000); // the PIDS line, if the command got that far
            } catch (InterruptedException e) {
                notes.add(attempt + ": " + e);
                return;
            }
            current.remove(index, run);
            Thread check = new Thread(() -> checkGone(run), "gone-" + attempt);
            checkers.add(check);
            check.start();
        }
    }

    /**
     * How long each {@code baton run} waits for its lock: 3× the lease (at least 2 s); with {@code kill-waiter} at
     * least twice the dead-waiter bound with its margin, so a waiter stuck behind a dead place stays in line long
     * enough to show it.
     */
    private long waitMillis() {
        long wait = Math.max(2000, spec.lease().toMillis() * 3);
        if (spec.fault().equals("kill-waiter")) {
            wait = Math.max(wait, strategy.deadPlaceBound(spec.lease()).orElse(Duration.ZERO).plus(MARGIN)
                    .multipliedBy(2).toMillis());
        }
        return wait;
    }

    /** Lists the locks with their lines every {@value #LOOK_MS} ms while the scenario runs. */
    private void lookLoop() {
        while (!stopping) {
            long s0 = System.nanoTime();
            try {
                List<dev.baton.LockInfo> locks = backend.client().list();
                looks.add(new DeadPlaces.Look(s0, System.nanoTime(), locks));
            } catch (RuntimeException e) {
                // the backend is busy; the next look will do
            }
            try {
                Thread.sleep(LOOK_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The {@code baton run} whose JVM an owner id ({@code host/pid/random#thread}) names, or null. */
    private Run runOf(String owner) {
        if (owner == null) {
            return null;
        }
        String[] parts = owner.split("/");
        if (parts.length < 3) {
            return null;
        }
        try {
            return byPid.get(Long.parseLong(parts[1]));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * The {@code baton run} to kill for {@code kill-waiter}: in the line of a held lock, the first place of a live
     * {@code baton run} whose command has not started (it waits), or null.
     */
    private Run waiterToKill(Random random) {
        List<Run> aims = new ArrayList<>();
        for (dev.baton.LockInfo info : backend.client().list()) {
            if (!info.held()) {
                continue;
            }
            for (dev.baton.LockInfo.Waiter w : info.line()) {
                Run r = runOf(w.owner());
                if (r != null && r.exited < 0 && r.commandPid < 0 && r.fault == null) {
                    aims.add(r);
                    break;
                }
            }
        }
        return aims.isEmpty() ? null : aims.get(random.nextInt(aims.size()));
    }

    private void readPids(Run run) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(run.process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("PIDS ")) {
                    String[] p = line.split(" ");
                    run.grandchildPid = Long.parseLong(p[2]);
                    run.commandPid = Long.parseLong(p[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            notes.add(run.attempt + ": reading its output: " + e);
        }
    }

    /** Waits up to grace + {@link #SURVIVOR_BOUND} for the run's command and grandchild to be gone. */
    private void checkGone(Run run) {
        long deadline = run.exited + GRACE.plus(SURVIVOR_BOUND).toNanos();
        List<Long> alive = new ArrayList<>();
        do {
            alive.clear();
            for (long pid : List.of(run.commandPid, run.grandchildPid)) {
                if (pid > 0 && isOurs(pid, run.attempt)) {
                    alive.add(pid);
                }
            }
            if (alive.isEmpty()) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        } while (System.nanoTime() < deadline);
        run.survivors = List.copyOf(alive);
        for (long pid : alive) { // don't let it run on into the next scenario
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Whether the pid is alive (not a zombie) and its command line names the attempt. */
    private static boolean isOurs(long pid, String attempt) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int close = stat.lastIndexOf(')');
            if (close > 0 && stat.length() > close + 2 && stat.charAt(close + 2) == 'Z') {
                return false;
            }
            byte[] cmdline = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return new String(cmdline, StandardCharsets.UTF_8).replace('\0', ' ').contains(" " + attempt + " ");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Injects faults until {@code end}; while fewer than {@link Spec#minHits} hit, it goes on, up to
     * {@link Scenario#MAX_STRETCH} × the duration, so a slow machine gets a verdict rather than INCONCLUSIVE.
     */
    private void nemesis(long end) throws InterruptedException {
        Random random = new Random(spec.seed() * 31 + 7);
        long lease = spec.lease().toMillis();
        long faultLength = lease + lease / 2;
        long last = end + (Scenario.MAX_STRETCH - 1) * spec.duration().toNanos();
        while (System.nanoTime() < end || !spec.fault().equals("none") && hits < spec.minHits()
                && System.nanoTime() < last) {
            if (System.nanoTime() >= end && !stretched) {
                stretched = true;
                notes.add("only " + hits + " hit(s) after " + spec.duration().toSeconds() + " s: went on for up to "
                        + Scenario.MAX_STRETCH + "× the duration until " + spec.minHits() + " hit(s)");
            }
            Thread.sleep(lease + random.nextInt((int) Math.max(1, lease * 2)));
            if (spec.fault().equals("none") || System.nanoTime() >= (hits < spec.minHits() ? last : end)) {
                continue;
            }
            if (spec.fault().equals("failover") && prepared == null) {
                try {
                    prepared = Failover.of(spec.url()).prepare(); // the lookups before the target is chosen
                } catch (IOException e) {
                    notes.add("failover: cannot find the deployment's leader: " + e.getMessage());
                    continue;
                }
            }
            Run target;
            if (spec.fault().equals("kill-waiter")) {
                try {
                    target = waiterToKill(random);
                } catch (RuntimeException e) {
                    continue; // the backend is busy: no line to read this time
                }
                if (target == null) {
                    continue;
                }
            } else {
                List<Run> running = new ArrayList<>();
                for (Run r : current.values()) {
                    if (r.commandPid > 0 && r.exited < 0) {
                        running.add(r);
                    }
                }
                if (running.isEmpty()) {
                    continue;
                }
                target = running.get(random.nextInt(running.size()));
            }
            long pid = target.process.pid();
            faults++;
            try {
                switch (spec.fault()) {
                    case "pause-jvm" -> {
                        signal("STOP", List.of(pid));
                        Thread.sleep(faultLength);
                        signal("CONT", List.of(pid));
                    }
                    case "pause-tree" -> {
                        List<Long> tree = new ArrayList<>();
                        tree.add(pid);
                        ProcessHandle.of(pid).ifPresent(h -> h.descendants().forEach(d -> tree.add(d.pid())));
                        signal("STOP", tree);
                        Thread.sleep(faultLength);
                        Collections.reverse(tree);
                        signal("CONT", tree);
                    }
                    case "kill", "kill-waiter" -> signal("KILL", List.of(pid));
                    case "hup" -> signal("HUP", List.of(pid));
                    case "session-kill" -> backend.killSessions(proxies.get(target.worker).upstreamPorts());
                    case "failover" -> failover();
                    case "partition" -> {
                        FaultProxy.Mode[] modes = {FaultProxy.Mode.BLACKHOLE, FaultProxy.Mode.RESET,
                                FaultProxy.Mode.DROP_RESPONSES};
                        FaultProxy proxy = proxies.get(target.worker);
                        proxy.fault(modes[faults % modes.length]);
                        Thread.sleep(faultLength);
                        proxy.heal();
                    }
                    default -> throw new IllegalStateException("no fault " + spec.fault());
                }
            } catch (IOException e) {
                notes.add("fault " + faults + " (" + spec.fault() + " on " + target.attempt + ") failed: " + e);
                continue;
            }
            if (target.fault == null) {
                target.fault = spec.fault();
            }
            if (spec.fault().equals("kill-waiter") && target.commandPid > 0) {
                continue; // it was granted the lock before the signal came: not a waiter's death
            }
            hits++;
        }
    }

    /**
     * The {@code failover} fault: every {@code baton run} whose command runs now is hit by it (the whole deployment
     * fails over, not one worker's connection); then the prepared {@link Failover} runs to its end, the deployment
     * whole again.
     */
    private void failover() throws IOException, InterruptedException {
        Failover failover = prepared;
        prepared = null;
        for (Run r : current.values()) {
            if (r.commandPid > 0 && r.exited < 0 && r.fault == null) {
                r.fault = "failover";
            }
        }
        Failover.Outcome o = failover.run();
        notes.add("failover " + faults + " at " + ms(o.killed()) + ": " + o.description() + "; the new leader served"
                + " after " + TimeUnit.NANOSECONDS.toMillis(o.serving() - o.killed()) + " ms, the deployment was whole"
                + " again after " + TimeUnit.NANOSECONDS.toMillis(o.whole() - o.killed()) + " ms");
        // the scenario goes on until a command began on the new leader, so that its history shows grants after
        // the failover too (their tokens against the earlier ones: the stale-access check)
        long deadline = System.nanoTime() + AFTER_FAILOVER.toNanos();
        while (System.nanoTime() - deadline < 0) {
            for (ResourceServer.Access a : resource.accesses()) {
                if (a.op().equals("begin") && a.accepted() && a.nanos() > o.killed()) {
                    notes.add("failover " + faults + ": the first command after it began "
                            + TimeUnit.NANOSECONDS.toMillis(a.nanos() - o.serving()) + " ms after the new leader"
                            + " served (" + a.attempt() + ", token " + a.token() + ")");
                    return;
                }
            }
            Thread.sleep(100);
        }
        stuck.add("no command began within " + AFTER_FAILOVER.toSeconds() + " s after failover " + faults
                + " left the deployment whole again (at " + ms(o.whole()) + ")");
    }

    private static void signal(String sig, List<Long> pids) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("kill", "-" + sig));
        pids.forEach(p -> cmd.add(Long.toString(p)));
        Process k = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        k.getInputStream().readAllBytes();
        k.waitFor(10, TimeUnit.SECONDS);
        // a process of the tree may have ended meanwhile: kill's status is not a failure of the fault
    }

    private Result analyse(List<ResourceServer.Access> accesses) {
        List<String> violations = new ArrayList<>(stuck);
        // grant start: the first access of each token on its lock (the command's accepted BEGIN)
        Map<String, TreeMap<Long, Long>> grantStart = new HashMap<>(); // lock -> token -> nanos
        Map<String, String> attemptOfToken = new HashMap<>();
        for (ResourceServer.Access a : accesses) {
            if (a.op().equals("begin") && a.accepted()) {
                grantStart.computeIfAbsent(a.lock(), k -> new TreeMap<>()).putIfAbsent(a.token(), a.nanos());
                attemptOfToken.put(a.lock() + "#" + a.token(), a.attempt());
            }
        }
        Map<String, Long> lastAccess = new HashMap<>(); // attempt -> nanos of its (or its grandchild's) last access
        Map<String, Long> lostAt = new HashMap<>(); // attempt -> nanos of its first access after a later grant began
        int refusals = 0;
        Map<String, Long> lastWrite = new HashMap<>();
        for (ResourceServer.Access a : accesses) {
            String attempt = a.attempt().endsWith("/g") ? a.attempt().substring(0, a.attempt().length() - 2)
                    : a.attempt();
            lastAccess.merge(attempt, a.nanos(), Math::max);
            TreeMap<Long, Long> starts = grantStart.getOrDefault(a.lock(), new TreeMap<>());
            Long later = null;
            for (Map.Entry<Long, Long> e : starts.tailMap(a.token(), false).entrySet()) {
                if (e.getValue() < a.nanos()) {
                    later = e.getKey();
                    break;
                }
            }
            if (later != null) {
                lostAt.putIfAbsent(attempt, a.nanos());
                if (a.accepted()) {
                    violations.add("stale access accepted: " + a.op() + " by " + a.attempt() + " (token " + a.token()
                            + ") on " + a.lock() + " after grant " + attemptOfToken.get(a.lock() + "#" + later)
                            + " (token " + later + ") began");
                } else {
                    refusals++;
                }
            } else if (!a.accepted()) {
                refusals++;
            }
            if (a.op().equals("write") && a.accepted()) {
                Long prev = lastWrite.put(a.lock(), a.value());
                if (prev != null && a.value() != prev + 1) {
                    violations.add("lost update on " + a.lock() + ": " + a.attempt() + " wrote " + a.value()
                            + " after " + prev);
                }
            }
        }
        int grants = grantStart.values().stream().mapToInt(Map::size).sum();
        int conflictExits = 0;
        for (Run r : runs) {
            if (r.status == CONFLICT) {
                conflictExits++;
            }
            // only an access before baton exited says the lease was lost while the command ran; later ones
            // are a survivor's, which the survivor check reports
            if (lostAt.containsKey(r.attempt) && r.exited > 0 && lostAt.get(r.attempt) < r.exited
                    && r.status != CONFLICT && !"kill".equals(r.fault) && !"kill-waiter".equals(r.fault)
                    && r.status != 137) {
                violations.add("baton run of " + r.attempt + " (" + r.lock + ") lost its lease while its command ran"
                        + " (a later grant began before its access at " + ms(lostAt.get(r.attempt)) + ") but exited "
                        + r.status + ", not " + CONFLICT + (r.fault != null ? " (fault: " + r.fault + ")" : ""));
            }
            if (!r.survivors.isEmpty()) {
                violations.add("process(es) " + r.survivors + " of " + r.attempt + " (" + r.lock + ") still alive "
                        + (GRACE.plus(SURVIVOR_BOUND).toMillis()) + " ms after its baton run exited with " + r.status
                        + (r.fault != null ? " (fault: " + r.fault + ")" : ""));
            }
        }
        if (spec.fault().equals("kill-waiter")) {
            checkDeadPlaces(accesses, violations);
        }
        String verdict = !violations.isEmpty() ? "FAIL"
                : grants < 2 || hits < (spec.fault().equals("none") ? 0 : spec.minHits()) ? "INCONCLUSIVE" : "PASS";
        if (grants < 2) {
            notes.add("only " + grants + " grant(s): see the .err files in " + spec.workDir());
        }
        return new Result(spec, backend.shortName(), runs.size(), grants, faults, hits, conflictExits, refusals,
                violations, List.copyOf(notes), verdict);
    }

    /** The dead-waiter check ({@link DeadPlaces}) on the looks this scenario made. */
    private void checkDeadPlaces(List<ResourceServer.Access> accesses, List<String> violations) {
        long limit = strategy.deadPlaceBound(spec.lease()).orElseThrow().plus(MARGIN).toNanos();
        java.util.function.ToLongFunction<String> diedAt = owner -> {
            Run r = runOf(owner);
            return r == null || r.exited < 0 ? Long.MAX_VALUE : r.exited;
        };
        int windows = 0;
        long longest = -1;
        for (DeadPlaces.Window w : DeadPlaces.windows(looks, diedAt)) {
            boolean granted = false;
            for (ResourceServer.Access a : accesses) {
                if (a.op().equals("begin") && a.accepted() && a.lock().equals(w.lock()) && a.nanos() > w.firstS0()
                        && a.nanos() < w.lastS1()) {
                    granted = true;
                    break;
                }
            }
            if (granted) {
                continue;
            }
            windows++;
            longest = Math.max(longest, w.length());
            if (w.length() > limit) {
                violations.add("dead waiter: " + w.lock() + " free for " + w.length() / 1_000_000 + " ms (" + ms(w.from())
                        + ".." + ms(w.to()) + ", no command began) while live waiter " + w.waiter() + " stood behind the"
                        + " place(s) of killed " + w.deadAhead() + "; bound " + limit / 1_000_000 + " ms");
            }
        }
        notes.add(windows + " time(s) a free lock had a live waiter behind a dead place, longest "
                + (longest < 0 ? "-" : Long.toString(longest / 1_000_000)) + " ms; bound " + limit / 1_000_000 + " ms");
    }

    private long runStartBase() {
        return runs.isEmpty() ? 0 : runs.get(0).started;
    }

    private String ms(long nanos) {
        return "+" + (nanos - runStartBase()) / 1_000_000 + " ms";
    }

    /** A block per scenario. */
    static String block(Result r) {
        StringBuilder b = new StringBuilder();
        b.append(String.format("%n== %s / %s / via baton run / %s: %s%n", r.backend(), r.spec().strategy(),
                r.spec().fault(), r.verdict()));
        b.append(String.format("   runs %d, grants %d, faults %d (hit a %s: %d), exits %d: %d,"
                        + " fencing refusals %d%n", r.runs(), r.grants(), r.faults(),
                r.spec().fault().equals("kill-waiter") ? "waiting baton run" : "running command", r.hits(), CONFLICT,
                r.conflictExits(), r.refusals()));
        r.violations().stream().limit(20).forEach(v -> b.append("   VIOLATION ").append(v).append('\n'));
        if (r.violations().size() > 20) {
            b.append("   ... ").append(r.violations().size() - 20).append(" more\n");
        }
        r.notes().forEach(n -> b.append("   note: ").append(n).append('\n'));
        return b.toString();
    }

    /** The summary table. */
    static String summary(List<Result> results) {
        StringBuilder b = new StringBuilder();
        b.append(String.format("%-10s %-8s %-12s %5s %6s %6s %5s %8s %9s %10s  %s%n", "backend", "strategy", "fault",
                "runs", "grants", "faults", "hits", "exit-76", "refusals", "violations", "verdict"));
        for (Result r : results) {
            b.append(String.format("%-10s %-8s %-12s %5d %6d %6d %5d %8d %9d %10d  %s%n", r.backend(),
                    r.spec().strategy(), r.spec().fault(), r.runs(), r.grants(), r.faults(), r.hits(),
                    r.conflictExits(), r.refusals(), r.violations().size(), r.verdict()));
        }
        return b.toString();
    }
}
