package dev.baton.checker;

import dev.baton.Lease;
import dev.baton.LockInfo;
import dev.baton.LockTimeoutException;
import dev.baton.faultproxy.FaultProxy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Runs one scenario: starts the resource server, a fault proxy per worker (network backends), the workers,
 * a sampler that lists the backend's holders every {@value #SAMPLE_MS} ms, and the nemesis; then stops the
 * faults, lets the system settle, stops the workers, probes every lock and looks for orphans, and hands
 * the whole record to {@link Analysis}.
 *
 * <p>The nemesis targets the <em>current holder as the backend reports it</em>: the latest sample's holder
 * ids ({@code w<index>.<gen>/pid/…#thread}) name the worker process. Where the holder is a server session
 * (advisory and named locks), the backend reports the session's client port instead, and the proxy that
 * opened that port names the worker and its generation: the sample's holder becomes
 * {@code w<index>.<gen>/session <as the server shows it>}. Whether the fault really hit a holder is decided
 * afterwards from that worker's own history: it had been granted the lock and had neither started
 * releasing it nor heard it was lost before the fault began.
 */
final class Scenario {
    static final int SAMPLE_MS = 25;

    /** A fault the nemesis injected. */
    record Fault(int index, String kind, String mode, int worker, int generation, long pid, String lock,
                 String holder, long token, long start, long end, int effect) {
    }

    /** One worker process: generation {@code generation} of worker slot {@code worker}. */
    record WorkerProcess(int worker, int generation) {
    }

    /** One listing of the backend's locks, made between {@code s0} and {@code s1}. */
    record Sample(long s0, long s1, List<LockInfo> locks) {
    }

    /** The end-of-run probe of one lock. */
    record Probe(String lock, boolean acquired, long millis, String message) {
    }

    /** A worker process, one generation of one worker slot. */
    static final class Proc {
        final int index;
        final int gen;
        final Process process;
        final Path events;
        final long started = System.nanoTime();
        volatile long ended = -1;
        /** When the controller saw the process gone (just after it exited), or -1 while it runs. */
        volatile long exited = -1;
        volatile String endCause;

        Proc(int index, int gen, Process process, Path events) {
            this.index = index;
            this.gen = gen;
            this.process = process;
            this.events = events;
        }
    }

    /** Everything a run leaves for the analysis. */
    record Record(ScenarioSpec spec, String backend, String backendName, List<Proc> procs, List<Fault> faults,
                  List<Sample> samples, List<ResourceServer.Access> accesses, Map<String, Long> counters,
                  List<Probe> probes, List<LockInfo> orphanRows, int orphanSessions, long runStart, long faultsEnd,
                  long stopAt, List<String> notes, Optional<String> notApplicable) {
    }

    private final ScenarioSpec spec;
    private final List<Proc> procs = new CopyOnWriteArrayList<>();
    private final Map<Integer, Proc> current = new ConcurrentHashMap<>();
    private final List<FaultProxy> proxies = new ArrayList<>();
    private final Set<Integer> allUpstreamPorts = ConcurrentHashMap.newKeySet();
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final List<Sample> samples = new CopyOnWriteArrayList<>();
    private final Set<Integer> underFault = ConcurrentHashMap.newKeySet();
    private final List<String> notes = new CopyOnWriteArrayList<>();
    private final Random random;
    /** Faults being injected now, by index: in a snapshot they count as lasting their full length. */
    private final Map<Integer, Fault> active = new ConcurrentHashMap<>();
    private final java.util.function.Predicate<Analysis.Result> stopWhen;
    /** Whether the nemesis stops once the history so far has the hits a PASS needs ({@code --until-hits}). */
    private final boolean untilHits;
    private volatile long runStart;
    private CheckBackend backend;
    private ResourceServer resource;
    private volatile boolean sampling = true;

    Scenario(ScenarioSpec spec) {
        this(spec, false);
    }

    /**
     * A scenario that, if {@code untilHits}, stops injecting faults as soon as the history so far (analysed about
     * every {@value #CHECK_MS} ms) has as many hits as a PASS needs ({@link ScenarioSpec#minHits}) and no
     * violation, even before its duration; otherwise, and with fewer hits, it runs as {@link #Scenario(ScenarioSpec)}.
     */
    Scenario(ScenarioSpec spec, boolean untilHits) {
        this(spec, null, untilHits);
    }

    /**
     * A scenario that stops injecting faults early, once an analysis of the history so far satisfies
     * {@code stopWhen} (checked about every {@value #CHECK_MS} ms; the positive controls stop at their first
     * violation). {@link ScenarioSpec#duration()} is then the bound.
     */
    Scenario(ScenarioSpec spec, java.util.function.Predicate<Analysis.Result> stopWhen) {
        this(spec, stopWhen, false);
    }

    private Scenario(ScenarioSpec spec, java.util.function.Predicate<Analysis.Result> stopWhen, boolean untilHits) {
        this.spec = spec;
        this.random = new Random(spec.seed());
        this.stopWhen = stopWhen;
        this.untilHits = untilHits;
    }

    /** How often the nemesis analyses the history so far (hits, {@code stopWhen}). */
    static final int CHECK_MS = 1000;
    /**
     * While fewer than {@link ScenarioSpec#minHits} faults hit a holder, a scenario goes on after its duration,
     * up to this many times its duration: a slow machine gets a verdict, not INCONCLUSIVE.
     */
    static final int MAX_STRETCH = 3;

    /** Why this scenario cannot run on this backend (SQLite has no sessions or network path), if so. */
    static Optional<String> notApplicable(ScenarioSpec spec, CheckBackend backend) {
        boolean embedded = spec.url().toLowerCase(java.util.Locale.ROOT).startsWith("jdbc:sqlite:");
        if (spec.fault().equals("switchover") && !RedisStrategy.isSentinel(spec.url())) {
            return Optional.of("a switchover (SENTINEL FAILOVER) is Redis Sentinel's planned failover; --faults failover"
                    + " is the fault of this deployment");
        }
        if (!embedded && backend.serverAddress().isEmpty() && List.of("session-kill", "partition", "restart")
                .contains(spec.fault())) {
            return Optional.of(backend.shortName() + " is reached through several servers (" + spec.url() + "), which"
                    + " the workers pick for themselves: the " + spec.fault() + " fault needs one server behind the"
                    + " checker's proxy; --faults failover is the fault of such a deployment");
        }
        if (spec.fault().equals("kill-waiter") && spec.strategy().deadPlaceBound(spec.leaseTime()).isEmpty()) {
            return Optional.of("strategy " + spec.strategy().name() + " on " + backend.shortName() + " does not show its"
                    + " line of waiters, so there is no waiter to aim at (ZooKeeper: a dead waiter's node lives one session"
                    + " timeout; the session strategy: the server drops a dead waiter with its session)");
        }
        if (spec.fault().equals("session-kill") && backend.sessionKillUnsupported().isPresent()) {
            return backend.sessionKillUnsupported();
        }
        if (spec.fault().equals("partition") && backend.serverAddress().isEmpty()) {
            return Optional.of(backend.shortName() + " is not reached over a network: there is no path to partition");
        }
        if (spec.fault().equals("session-kill") && spec.pool() == Pool.PGBOUNCER) {
            return Optional.of("through PgBouncer the server sessions are the pooler's, shared by all its clients:"
                    + " there is no worker session to kill");
        }
        if (spec.fault().equals("restart") && backend.serverAddress().isEmpty()) {
            return Optional.of(backend.shortName() + " is an embedded file: there is no server to restart");
        }
        return Optional.empty();
    }

    Record run() throws Exception {
        Files.createDirectories(spec.workDir());
        backend = spec.strategy().open(spec.url(), spec.table(), spec.leaseTime());
        try {
            Optional<String> na = notApplicable(spec, backend);
            if (na.isPresent()) {
                return new Record(spec, backend.description(), backend.shortName(), List.of(), List.of(), List.of(),
                        List.of(), Map.of(), List.of(), List.of(), 0, 0, 0, 0, List.of(), na);
            }
            resource = new ResourceServer(spec.fence());
            try {
                return runWithResource();
            } finally {
                resource.close();
            }
        } finally {
            backend.close();
        }
    }

    /**
     * A pool the strategy documents that it refuses ({@link CheckStrategy#refuses}): one client built and one
     * lock taken through it, in this process. A refusal is the documented outcome, reported as REFUSED with the
     * strategy's own message, instead of every worker retrying until the scenario times out; a strategy that
     * accepts after all runs the scenario like any other, with a note.
     */
    private Optional<String> refusal() {
        Optional<String> expected = spec.strategy().refuses(spec.pool());
        if (expected.isEmpty()) {
            return Optional.empty();
        }
        String url = spec.pool() == Pool.PGBOUNCER ? backend.urlThroughProxy(Pool.PGBOUNCER_ADDRESS.getPort())
                : spec.url();
        try (dev.baton.LockClient c = spec.strategy().newClient(url, spec.table(), spec.leaseTime(), "checker-preflight",
                spec.pool())) {
            c.lock("lock-0").tryAcquire().ifPresent(Lease::close);
            notes.add("strategy " + spec.strategy().name() + " was expected to refuse --pool " + spec.pool() + " ("
                    + expected.get() + ") but accepted it");
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of("strategy " + spec.strategy().name() + " refused --pool " + spec.pool() + " ("
                    + expected.get() + "): " + e.getMessage());
        }
    }

    private Record runWithResource() throws Exception {
        Optional<String> refused = refusal();
        if (refused.isPresent()) {
            return new Record(spec, backend.description(), backend.shortName(), List.of(), List.of(), List.of(),
                    List.of(), Map.of(), List.of(), List.of(), 0, 0, 0, 0, List.of(), refused);
        }
        Optional<InetSocketAddress> server = spec.pool() == Pool.PGBOUNCER ? Optional.of(Pool.PGBOUNCER_ADDRESS)
                : backend.serverAddress();
        for (int i = 0; i < spec.workers(); i++) {
            if (server.isPresent()) {
                proxies.add(new FaultProxy(server.get()));
            }
        }
        try {
            Files.deleteIfExists(goFile());
            for (int i = 0; i < spec.workers(); i++) {
                spawn(i, 0);
            }
            awaitReady(Duration.ofSeconds(90));
            Thread sampler = new Thread(this::sampleLoop, "sampler");
            sampler.setDaemon(true);
            sampler.start();
            Thread tracker = new Thread(this::trackPorts, "port-tracker");
            tracker.setDaemon(true);
            tracker.start();
            long runStart = System.nanoTime();
            this.runStart = runStart;
            long end = runStart + spec.duration().toNanos();
            List<Thread> running = new ArrayList<>();
            if (!spec.fault().equals("none")) {
                nemesis(end, running);
            } else {
                sleepUntil(end);
            }
            for (Thread t : running) {
                t.join();
            }
            long faultsEnd = System.nanoTime();
            proxies.forEach(FaultProxy::heal);
            // let the system recover with no faults before stopping it; after a restart, for as long as every
            // lock has to be granted again (check (c) can only judge a deadline that passed before the stop)
            long settle = Math.max(1000, spec.leaseTime().toMillis());
            if (ScenarioSpec.serverWide(spec.fault())) {
                settle = Math.max(settle, spec.strategy().handOver("restart", "", spec.leaseTime()).bound()
                        .plus(spec.margin()).toMillis() + 500);
            }
            Thread.sleep(settle);
            long stopAt = System.nanoTime();
            stopWorkers();
            // sessions opened from here on are not the workers' (a new connection may get a port a worker used)
            long sessionMark = backend.sessionKillUnsupported().isPresent() ? 0 : backend.sessionMark();
            sampling = false;
            sampler.join(5000);
            List<Probe> probes = probe();
            List<LockInfo> orphanRows = new ArrayList<>();
            for (LockInfo info : backend.client().list()) {
                if (info.held()) {
                    orphanRows.add(info);
                }
            }
            proxies.forEach(FaultProxy::close);
            int orphanSessions = countOrphanSessions(sessionMark);
            return new Record(spec, backend.description(), backend.shortName(), List.copyOf(procs),
                    List.copyOf(faults), List.copyOf(samples), resource.accesses(), resource.counters(), probes,
                    orphanRows, orphanSessions, runStart, faultsEnd, stopAt, List.copyOf(notes), Optional.empty());
        } finally {
            for (Proc p : procs) {
                p.process.destroyForcibly();
            }
            proxies.forEach(FaultProxy::close);
        }
    }

    private void spawn(int index, int gen) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(spec.workerJvm());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Worker.class.getName());
        Path events = spec.workDir().resolve("w" + index + "." + gen + ".jsonl");
        Files.deleteIfExists(events);
        String url = proxies.isEmpty() ? spec.url() : backend.urlThroughProxy(proxies.get(index).port());
        cmd.addAll(List.of("strategy=" + Strategies.workerArgument(spec.strategy()), "url=" + url,
                "table=" + spec.table(), "lease=" + spec.leaseTime().toMillis(), "locks=" + spec.locks(),
                "index=" + index, "gen=" + gen, "resource=" + resource.port(), "events=" + events,
                "seed=" + spec.seed(), "wait=" + spec.acquireWait().toMillis(), "pool=" + spec.pool().id(),
                "go=" + goFile()));
        if (!proxies.isEmpty()) {
            proxies.get(index).tag(gen); // the previous generation is dead: only this one can connect now
        }
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.redirectError(spec.workDir().resolve("w" + index + "." + gen + ".err").toFile());
        Proc p = new Proc(index, gen, pb.start(), events);
        procs.add(p);
        current.put(index, p);
        p.process.onExit().thenRun(() -> {
            p.exited = System.nanoTime();
            if (p.ended < 0) {
                p.ended = System.nanoTime();
                p.endCause = "exited with status " + p.process.exitValue();
                notes.add("worker w" + index + "." + gen + " exited by itself with status " + p.process.exitValue()
                        + " (see " + spec.workDir().resolve("w" + index + "." + gen + ".err") + ")");
            }
        });
    }

    /**
     * Waits until every worker has built its client, then lets them all begin at once ({@link #goFile()}): a worker
     * that began on its own would contend while the others' JVMs still start, and on a small machine those starts
     * can starve the server and the client (a ZooKeeper session of one lease time expired so, before any fault).
     */
    private void awaitReady(Duration max) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + max.toNanos();
        for (Proc p : procs) {
            while (!logged(p.events, "\"op\":\"ready\"")) {
                if (System.nanoTime() > deadline || !p.process.isAlive()) {
                    throw new IllegalStateException("worker w" + p.index + "." + p.gen + " did not start within "
                            + max.toSeconds() + " s; see " + spec.workDir());
                }
                Thread.sleep(50);
            }
        }
        Files.writeString(goFile(), "go\n", StandardCharsets.UTF_8);
    }

    /** The file whose existence lets workers begin; a worker started again after a kill finds it there at once. */
    private Path goFile() {
        return spec.workDir().resolve("go");
    }

    private static boolean logged(Path file, String needle) {
        try {
            return Files.exists(file) && Files.readString(file, StandardCharsets.UTF_8).contains(needle);
        } catch (IOException e) {
            return false;
        }
    }

    private void sampleLoop() {
        while (sampling) {
            long s0 = System.nanoTime();
            try {
                List<CheckBackend.Seen> seen = backend.look();
                long s1 = System.nanoTime();
                List<LockInfo> infos = new ArrayList<>(seen.size());
                for (CheckBackend.Seen x : seen) {
                    infos.add(resolve(x, s1));
                }
                samples.add(new Sample(s0, s1, infos));
            } catch (RuntimeException e) {
                // the backend is busy or briefly unreachable; the next sample will do
            }
            try {
                Thread.sleep(SAMPLE_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void trackPorts() {
        while (sampling) {
            proxies.forEach(p -> allUpstreamPorts.addAll(p.upstreamPorts()));
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
        }
    }

    /**
     * A lock held by a server session: its holder named by the worker whose proxy opened the session's
     * client port ({@code w<index>.<gen>/session …}); unchanged if no proxy did (the controller's own
     * session, or a holder without a port).
     */
    private LockInfo resolve(CheckBackend.Seen seen, long at) {
        LockInfo info = seen.info();
        if (seen.clientPort() < 0) {
            return info;
        }
        FaultProxy.Upstream best = null;
        int index = -1;
        for (int i = 0; i < proxies.size(); i++) {
            Optional<FaultProxy.Upstream> u = proxies.get(i).upstreamAt(seen.clientPort(), at);
            if (u.isPresent() && (best == null || u.get().openedNanos() - best.openedNanos() > 0)) {
                best = u.get();
                index = i;
            }
        }
        if (best == null) {
            return info;
        }
        return new LockInfo(info.name(), sessionHolder(index, best.tag(), info.holder()), info.fencingToken(),
                info.acquiredAt(), info.expiresAt(), info.held());
    }

    /** The holder id of a lock held by a session of worker {@code w<index>.<gen>}. */
    static String sessionHolder(int index, int gen, String shown) {
        return "w" + index + "." + gen + SESSION_MARK + shown;
    }

    private static final String SESSION_MARK = "/session ";

    /** Whether a holder id names a worker process by its session (not one attempt by its thread). */
    static boolean isSessionHolder(String holder) {
        return holder != null && workerOf(holder).isPresent() && holder.startsWith(SESSION_MARK, holder.indexOf('/'));
    }

    /** Holder id {@code w<index>.<gen>/pid/rand#thread} → that worker process, or empty for another client. */
    static Optional<WorkerProcess> workerOf(String holder) {
        if (holder == null || !holder.startsWith("w")) {
            return Optional.empty();
        }
        int slash = holder.indexOf('/');
        int dot = holder.indexOf('.');
        if (slash < 0 || dot < 0 || dot > slash) {
            return Optional.empty();
        }
        try {
            return Optional.of(new WorkerProcess(Integer.parseInt(holder.substring(1, dot)),
                    Integer.parseInt(holder.substring(dot + 1, slash))));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * Whether the nemesis goes on: until the scenario's duration, unless {@code stopWhen} holds for the
     * history so far (then the duration is the bound); without a stop condition, after the duration, while
     * fewer than {@link ScenarioSpec#minHits} faults hit a holder, up to {@link #MAX_STRETCH} × the duration.
     * With {@code untilHits}, it ends as soon as the history so far has those hits and no violation.
     */
    private boolean goOn(long end) {
        long now = System.nanoTime();
        if (stopWhen == null && !untilHits && now - end < 0) {
            return true;
        }
        if (now - (runStart + (stopWhen != null ? 1 : MAX_STRETCH) * spec.duration().toNanos()) >= 0) {
            return false; // with a stop condition, the duration is its bound
        }
        Analysis.Result so;
        try {
            so = new Analysis(snapshot()).analyse();
        } catch (RuntimeException e) {
            // an event log caught mid-write, say: no decision this time; stop at the duration
            notes.add("analysing the history so far at " + at(now) + " failed: " + e);
            return now - end < 0;
        }
        if (stopWhen != null && stopWhen.test(so)) {
            notes.add("stopped injecting faults early, at " + at(now) + ": the history so far met the stop condition");
            return false;
        }
        if (untilHits && so.hits() >= ScenarioSpec.minHits(spec.fault()) && so.totalViolations() == 0) {
            notes.add("stopped injecting faults at " + at(now) + " (--until-hits): " + so.hits() + " hit(s) so far, "
                    + ScenarioSpec.minHits(spec.fault()) + " needed");
            return false;
        }
        if (now - end < 0) {
            return true;
        }
        if (so.hits() < ScenarioSpec.minHits(spec.fault()) && so.totalViolations() == 0) { // a FAIL needs no hits
            if (stretched++ == 0) {
                notes.add("only " + so.hits() + " hit(s) after " + spec.duration().toSeconds() + " s: went on for up to "
                        + MAX_STRETCH + "× the duration until " + ScenarioSpec.minHits(spec.fault()) + " hits");
            }
            return true;
        }
        return false;
    }

    private int stretched;

    private String at(long nanos) {
        return String.format("t+%.3fs", (nanos - runStart) / 1e9);
    }

    /**
     * The history so far as a record for {@link Analysis}: faults under way count as lasting their full
     * length, the counters are the last accepted writes of the same access record (so the two agree), no
     * probe has run yet.
     */
    Record snapshot() {
        long now = System.nanoTime();
        List<ResourceServer.Access> accesses = resource.accesses();
        Map<String, Long> counters = new java.util.TreeMap<>();
        for (ResourceServer.Access a : accesses) {
            if (a.accepted() && a.op().equals("write")) {
                counters.put(a.lock(), a.value());
            }
        }
        List<Fault> fs = new ArrayList<>(faults);
        fs.addAll(active.values());
        return new Record(spec, backend.description(), backend.shortName(), List.copyOf(procs), fs,
                List.copyOf(samples), accesses, counters, List.of(), List.of(), 0, runStart, now, now,
                new ArrayList<>(), Optional.empty());
    }

    /**
     * The first sample begun after this call (waiting up to 250 ms for it), so that a fault aims at the holder the
     * backend shows now. Holds last 10–150 ms (and now and then longer than the lease); the latest sample, which
     * could be up to 250 ms old, often named a holder that had let go already, and the fault missed: ZooKeeper ×
     * kill hit a holder 3 times in 12 faults on a loaded machine, and the quick profile came out INCONCLUSIVE in CI.
     */
    private Sample freshSample() throws InterruptedException {
        long asked = System.nanoTime();
        long deadline = asked + TimeUnit.MILLISECONDS.toNanos(250);
        while (System.nanoTime() - deadline < 0) {
            Sample last = samples.get(samples.size() - 1);
            if (last.s0() - asked >= 0) {
                return last;
            }
            Thread.sleep(1);
        }
        return null;
    }

    /** The next failover, its leader found before the target is chosen ({@link Failover#prepare}). */
    private volatile Failover prepared;

    private void nemesis(long end, List<Thread> running) throws InterruptedException {
        // a dead waiter's place matters for about a second (its time to live), whatever the lease
        long gap = ScenarioSpec.serverWide(spec.fault()) ? Math.max(10_000, spec.leaseTime().toMillis() * 5)
                : spec.fault().equals("kill-waiter") ? 600 : Math.max(300, spec.leaseTime().toMillis() * 3 / 5);
        int maxConcurrent = spec.fault().equals("kill") || spec.fault().equals("kill-waiter")
                || spec.fault().equals("session-kill")
                || ScenarioSpec.serverWide(spec.fault()) ? 1 : Math.max(1, spec.workers() / 3);
        int n = 0;
        long nextCheck = System.nanoTime();
        long notBefore = System.nanoTime();
        faults:
        while (true) {
            long pause = ScenarioSpec.serverWide(spec.fault()) ? 200 : gap / 2 + random.nextInt((int) gap);
            long wake = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause);
            while (true) { // the drawn pause, looking at the history about every CHECK_MS meanwhile
                if (System.nanoTime() - nextCheck >= 0) {
                    if (!goOn(end)) {
                        break faults;
                    }
                    nextCheck = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MS);
                }
                long left = wake - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(left, Math.max(1, nextCheck - System.nanoTime())));
            }
            running.removeIf(t -> !t.isAlive());
            if (running.size() >= maxConcurrent || samples.isEmpty() || System.nanoTime() - notBefore < 0) {
                continue;
            }
            if ((spec.fault().equals("failover") || spec.fault().equals("switchover")) && prepared == null) {
                try {
                    prepared = Failover.of(spec.url()).prepare(); // the lookups before the target is chosen
                } catch (IOException e) {
                    notes.add("failover: cannot find the deployment's leader: " + e.getMessage());
                    notBefore = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000);
                    continue;
                }
            }
            Sample last = freshSample();
            if (last == null) {
                continue; // no sample came within 250 ms (the backend is busy or unreachable): who holds what is unknown
            }
            if (spec.fault().equals("kill-waiter")) {
                Optional<LockInfo> aim = waiterToKill(last);
                if (aim.isEmpty()) {
                    continue;
                }
                Proc p = current.get(workerOf(aim.get().holder()).orElseThrow().worker());
                underFault.add(p.index);
                int index = n++;
                Thread t = new Thread(() -> {
                    try {
                        inject(index, p, aim.get());
                    } catch (Exception e) {
                        notes.add("fault " + index + " (kill-waiter on w" + p.index + "." + p.gen + ") failed: " + e);
                    } finally {
                        underFault.remove(p.index);
                    }
                }, "fault-" + index);
                t.start();
                running.add(t);
                continue;
            }
            List<LockInfo> candidates = new ArrayList<>();
            for (LockInfo info : last.locks()) {
                Optional<WorkerProcess> w = workerOf(info.holder());
                if (info.held() && w.isPresent() && !underFault.contains(w.get().worker())) {
                    Proc p = current.get(w.get().worker());
                    if (p != null && p.gen == w.get().generation() && p.ended < 0) {
                        candidates.add(info);
                    }
                }
            }
            if (candidates.isEmpty()) {
                continue;
            }
            LockInfo target = candidates.get(random.nextInt(candidates.size()));
            int worker = workerOf(target.holder()).orElseThrow().worker();
            Proc p = current.get(worker);
            underFault.add(worker);
            int index = n++;
            Thread t = new Thread(() -> {
                try {
                    inject(index, p, target);
                } catch (Exception e) {
                    notes.add("fault " + index + " (" + spec.fault() + " on w" + p.index + "." + p.gen + ") failed: " + e);
                } finally {
                    underFault.remove(p.index);
                }
            }, "fault-" + index);
            t.start();
            running.add(t);
            if (ScenarioSpec.serverWide(spec.fault())) {
                t.join(); // one restart at a time, then a quiet gap for the locks to recover
                notBefore = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(gap);
            }
        }
    }

    /**
     * The waiter {@code kill-waiter} aims at in this listing: of the locks that are held and have a line, one at
     * random, and in its line the first place of a live worker process under no fault — the place that would be
     * served next, so its death keeps the lock from everyone behind it for as long as the place outlives it. The
     * result names the lock and, as its holder, the waiter's owner id.
     */
    private Optional<LockInfo> waiterToKill(Sample last) {
        List<LockInfo> aims = new ArrayList<>();
        for (LockInfo info : last.locks()) {
            if (!info.held()) {
                continue;
            }
            Optional<WorkerProcess> holder = workerOf(info.holder());
            for (LockInfo.Waiter w : info.line()) {
                Optional<WorkerProcess> wp = workerOf(w.owner());
                if (wp.isEmpty() || holder.isPresent() && holder.get().worker() == wp.get().worker()) {
                    continue;
                }
                Proc p = current.get(wp.get().worker());
                if (p != null && p.gen == wp.get().generation() && p.ended < 0 && !underFault.contains(p.index)) {
                    aims.add(new LockInfo(info.name(), w.owner(), -1, null, null, false));
                    break;
                }
            }
        }
        return aims.isEmpty() ? Optional.empty() : Optional.of(aims.get(random.nextInt(aims.size())));
    }

    /** Marks a fault under way (for snapshots), as lasting {@code length} from now. */
    private long begin(int index, String kind, String mode, Proc p, LockInfo target, Duration length, int effect) {
        long start = System.nanoTime();
        active.put(index, new Fault(index, kind, mode, p.index, p.gen, p.process.pid(), target.name(), target.holder(),
                target.fencingToken(), start, start + length.toNanos(), effect));
        return start;
    }

    private void done(int index, String kind, String mode, Proc p, LockInfo target, long start, int effect) {
        faults.add(new Fault(index, kind, mode, p.index, p.gen, p.process.pid(), target.name(), target.holder(),
                target.fencingToken(), start, System.nanoTime(), effect));
    }

    private void inject(int index, Proc p, LockInfo target) throws Exception {
        long pid = p.process.pid();
        try {
            switch (spec.fault()) {
                case "kill" -> {
                    long start = begin(index, "kill", "SIGKILL", p, target, Duration.ZERO, 1);
                    p.ended = start;
                    p.endCause = "killed (SIGKILL)";
                    p.process.destroyForcibly();
                    p.process.waitFor(10, TimeUnit.SECONDS);
                    done(index, "kill", "SIGKILL", p, target, start, 1);
                    spawn(p.index, p.gen + 1);
                }
                case "kill-waiter" -> {
                    long start = begin(index, "kill-waiter", "SIGKILL", p, target, Duration.ZERO, 1);
                    p.ended = start;
                    p.endCause = "killed (SIGKILL) while waiting in line";
                    p.process.destroyForcibly();
                    p.process.waitFor(10, TimeUnit.SECONDS);
                    done(index, "kill-waiter", "SIGKILL", p, target, start, 1);
                    spawn(p.index, p.gen + 1);
                }
                case "pause" -> {
                    String mode = "SIGSTOP " + spec.faultLength().toMillis() + " ms";
                    long start = begin(index, "pause", mode, p, target, spec.faultLength(), 1);
                    signal("STOP", pid);
                    Thread.sleep(spec.faultLength().toMillis());
                    signal("CONT", pid);
                    done(index, "pause", mode, p, target, start, 1);
                }
                case "session-kill" -> {
                    Set<Integer> ports = proxies.get(p.index).upstreamPorts();
                    long start = begin(index, "session-kill", "", p, target, Duration.ZERO, 1);
                    int killed = backend.killSessions(ports);
                    done(index, "session-kill", killed + " session(s)", p, target, start, killed);
                }
                case "partition" -> {
                    FaultProxy.Mode[] modes = {FaultProxy.Mode.BLACKHOLE, FaultProxy.Mode.RESET, FaultProxy.Mode.DROP_RESPONSES};
                    FaultProxy.Mode m = modes[index % modes.length];
                    String mode = m.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
                    FaultProxy proxy = proxies.get(p.index);
                    long start = begin(index, "partition", mode, p, target, spec.faultLength(), 1);
                    proxy.fault(m);
                    Thread.sleep(spec.faultLength().toMillis());
                    proxy.heal();
                    done(index, "partition", mode, p, target, start, 1);
                }
                case "restart" -> {
                    ServerRestart restart = ServerRestart.of(spec.url());
                    long start = begin(index, "restart", restart.description(), p, target, ServerRestart.TIMEOUT, 1);
                    restart.run();
                    done(index, "restart", restart.description(), p, target, start, 1);
                }
                case "failover", "switchover" -> {
                    Failover failover = prepared != null ? prepared : Failover.of(spec.url());
                    prepared = null;
                    boolean switchover = spec.fault().equals("switchover");
                    long start = begin(index, spec.fault(), switchover ? "SENTINEL FAILOVER" : failover.description(), p,
                            target, Failover.TIMEOUT, 1);
                    Failover.Outcome o = switchover ? failover.switchover() : failover.run();
                    faults.add(new Fault(index, spec.fault(), o.description(), p.index, p.gen, p.process.pid(),
                            target.name(), target.holder(), target.fencingToken(), o.killed(), o.whole(), 1));
                    notes.add(spec.fault() + " " + index + " at " + at(o.killed()) + ": " + o.description() + "; the new leader"
                            + " served after " + TimeUnit.NANOSECONDS.toMillis(o.serving() - o.killed()) + " ms, the"
                            + " deployment was whole again after " + TimeUnit.NANOSECONDS.toMillis(o.whole() - o.killed())
                            + " ms");
                    if (start > o.killed()) {
                        throw new IllegalStateException("failover began before it was marked");
                    }
                }
                default -> throw new IllegalStateException("no fault " + spec.fault());
            }
        } finally {
            active.remove(index);
        }
    }

    private static void signal(String sig, long pid) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).redirectErrorStream(true).start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new IOException("kill -" + sig + " " + pid + " failed: "
                    + new String(k.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
        }
    }

    private void stopWorkers() throws InterruptedException {
        List<Proc> live = new ArrayList<>();
        for (Proc p : current.values()) {
            if (p.ended < 0) {
                p.ended = System.nanoTime();
                p.endCause = "stopped (SIGTERM) at the end";
                p.process.destroy();
                live.add(p);
            }
        }
        for (Proc p : live) {
            if (!p.process.waitFor(10, TimeUnit.SECONDS)) {
                notes.add("worker w" + p.index + "." + p.gen + " did not stop on SIGTERM within 10 s; killed");
                p.process.destroyForcibly();
                p.process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private List<Probe> probe() {
        Duration bound = spec.strategy().handOverBound(spec.leaseTime()).plus(spec.margin());
        List<Probe> out = new ArrayList<>();
        for (int i = 0; i < spec.locks(); i++) {
            String name = "lock-" + i;
            long t0 = System.nanoTime();
            try (Lease lease = backend.client().lock(name).acquire(bound)) {
                out.add(new Probe(name, true, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0),
                        "token " + lease.fencingToken()));
            } catch (LockTimeoutException e) {
                out.add(new Probe(name, false, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), e.getMessage()));
            } catch (RuntimeException e) {
                out.add(new Probe(name, false, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), String.valueOf(e)));
            }
        }
        return out;
    }

    private int countOrphanSessions(long sessionMark) throws InterruptedException {
        if (backend.sessionKillUnsupported().isPresent() || allUpstreamPorts.isEmpty()) {
            return 0;
        }
        Set<Integer> ports = new TreeSet<>(allUpstreamPorts);
        // the server notices closed connections promptly; give it a moment
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        int n;
        while ((n = backend.countSessions(ports, sessionMark)) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        return n;
    }

    /** Reads every worker's event log; a torn last line (kill -9 mid-write) is skipped and counted. */
    static List<Map<String, Object>> readEvents(Proc p, List<String> notes) {
        List<Map<String, Object>> out = new ArrayList<>();
        List<String> lines;
        try {
            lines = Files.exists(p.events) ? Files.readAllLines(p.events, StandardCharsets.UTF_8) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            try {
                Map<String, Object> e = Json.parseFlat(line);
                e.put("w", (long) p.index);
                e.put("g", (long) p.gen);
                out.add(e);
            } catch (IllegalArgumentException e) {
                notes.add("w" + p.index + "." + p.gen + ": unreadable event line skipped: " + line);
            }
        }
        return Collections.unmodifiableList(out);
    }

    static Set<String> lockNames(int locks) {
        Set<String> out = new HashSet<>();
        for (int i = 0; i < locks; i++) {
            out.add("lock-" + i);
        }
        return out;
    }
}
