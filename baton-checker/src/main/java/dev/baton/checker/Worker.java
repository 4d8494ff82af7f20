package dev.baton.checker;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockTimeoutException;
import dev.baton.internal.LeaseDeadlines;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;

/**
 * One worker process. Loops until stopped: pick a lock → acquire (bounded wait) → {@code begin(token)} at
 * the resource → work → read the counter → work (now and then longer than the lease) → write counter + 1 →
 * {@code end} → release. Every call is logged as {@code invoke} then {@code ok}, {@code fail} (it certainly
 * did not happen) or {@code info} (outcome unknown). A lost-lease notice is logged, with the lease's local deadline
 * ({@code deadline}, in the log's time base), and ends the attempt at its next step; a stale access refused by the
 * resource ends it too.
 *
 * <p>Each attempt runs on a fresh thread, so the holder id the backend stores ({@code client id # thread
 * id}) names exactly one attempt: the controller can tell which attempt a sampled holder is.
 *
 * <p>Arguments are {@code key=value}: strategy, url, table, lease (ms), locks, index, gen, resource (port),
 * events (file), seed, wait (ms).
 */
public final class Worker {
    /** The event log's types of the outcomes the analysis reads back ({@link Outcome#ofEventType}). */
    private static final String OK = Outcome.OK.eventType();
    private static final String FAIL = Outcome.FAIL.eventType();
    private static final String INDETERMINATE = Outcome.INDETERMINATE.eventType();

    private final EventLog log;
    private final LockClient client;
    private final Map<String, String> args;
    private final Random random;
    private final int locks;
    private final long leaseMs;
    private final Duration wait;
    private final String id;
    private final Socket resource;
    private volatile boolean stopping;
    private final BufferedReader resIn;
    private final Writer resOut;
    /** Set for {@code --strategy run-once}: the worker calls {@code runOnce} instead of acquiring. */
    private final JdbcRunOnceStrategy runOnce;

    private Worker(Map<String, String> args, EventLog log, LockClient client, Socket resource,
                   JdbcRunOnceStrategy runOnce) throws IOException {
        this.runOnce = runOnce;
        this.args = args;
        this.log = log;
        this.client = client;
        this.locks = Integer.parseInt(args.get("locks"));
        this.leaseMs = Long.parseLong(args.get("lease"));
        this.wait = Duration.ofMillis(Long.parseLong(args.get("wait")));
        this.id = "w" + args.get("index") + "." + args.get("gen");
        this.random = new Random(Long.parseLong(args.get("seed")) * 7919 + Long.parseLong(args.get("index")) * 104729
                + Long.parseLong(args.get("gen")));
        this.resource = resource;
        this.resIn = new BufferedReader(new InputStreamReader(resource.getInputStream(), StandardCharsets.UTF_8));
        this.resOut = new OutputStreamWriter(resource.getOutputStream(), StandardCharsets.UTF_8);
    }

    /** Entry point of a worker JVM. */
    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String a : argv) {
            int eq = a.indexOf('=');
            args.put(a.substring(0, eq), a.substring(eq + 1));
        }
        EventLog log = new EventLog(Path.of(args.get("events")));
        String identity = "w" + args.get("index") + "." + args.get("gen");
        log.log("type", "info", "op", "start", "pid", ProcessHandle.current().pid());
        CheckStrategy strategy = Strategies.byName(args.get("strategy"));
        LockClient client = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (client == null) {
            try {
                Pool pool = Pool.byId(args.getOrDefault("pool", Pool.DEFAULT.id()));
                Duration lease = Duration.ofMillis(Long.parseLong(args.get("lease")));
                // the default pool through the four-argument form, which test variants override
                client = pool == Pool.DEFAULT ? strategy.newClient(args.get("url"), args.get("table"), lease, identity)
                        : strategy.newClient(args.get("url"), args.get("table"), lease, identity, pool);
            } catch (RuntimeException e) {
                log.log("type", "info", "op", "connect", "msg", String.valueOf(e));
                if (System.nanoTime() - deadline > 0) {
                    System.exit(3);
                }
                Thread.sleep(200);
            }
        }
        log.log("type", "info", "op", "ready", "client", client.clientId());
        Socket res = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(args.get("resource")));
        res.setTcpNoDelay(true);
        Worker w = new Worker(args, log, client, res,
                strategy instanceof JdbcRunOnceStrategy ro ? ro : null);
        awaitGo(args.get("go"));
        LockClient c = client;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            w.stopping = true;
            log.log("type", "info", "op", "stop");
            try {
                c.close(); // releases any held lease
            } catch (RuntimeException ignored) {
                // stopping anyway
            }
            log.log("type", "info", "op", "stopped");
        }));
        w.loop();
    }

    /**
     * Until the checker has seen every worker ready and written the {@code go} file (absent in an old checker's
     * arguments: no wait); a checker that never writes it within two minutes has gone, and so does the worker.
     */
    private static void awaitGo(String go) throws InterruptedException {
        if (go == null) {
            return;
        }
        Path file = Path.of(go);
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!Files.exists(file)) {
            if (System.nanoTime() - deadline > 0) {
                System.exit(3);
            }
            Thread.sleep(10);
        }
    }

    private void loop() throws InterruptedException {
        if (runOnce != null) {
            runLoop();
            return;
        }
        long n = 0;
        while (!stopping) {
            String attempt = id + "." + n++;
            String lock = "lock-" + random.nextInt(locks);
            long hold1 = 10 + random.nextInt(140);
            long hold2 = random.nextInt(100) < 7 ? leaseMs + leaseMs / 5 + random.nextInt((int) Math.max(1, leaseMs / 2))
                    : 10 + random.nextInt(140);
            Thread t = new Thread(() -> attempt(attempt, lock, hold1, hold2), "attempt-" + attempt);
            t.start();
            t.join();
            Thread.sleep(random.nextInt(20));
        }
    }

    /**
     * {@code --strategy run-once}: on a schedule (every 20–100 ms), call {@code runOnce} on a random name; the
     * task tells the resource it runs ({@code RUN}), works for 100–400 ms (at most 2/5 of the lease, so
     * well inside {@code atMostFor}), and says it is done ({@code DONE}). Each call runs on a fresh thread,
     * whose id is in the row's owner, as for an attempt.
     */
    private void runLoop() throws InterruptedException {
        long n = 0;
        Duration atMost = JdbcRunOnceStrategy.atMostFor(Duration.ofMillis(leaseMs));
        Duration atLeast = JdbcRunOnceStrategy.atLeastFor(Duration.ofMillis(leaseMs));
        while (!stopping) {
            String a = id + "." + n++;
            String name = "lock-" + random.nextInt(locks);
            long work = Math.min(100 + random.nextInt(301), leaseMs * 2 / 5);
            Thread t = new Thread(() -> {
                log.log("type", "invoke", "op", "runOnce", "a", a, "lock", name, "tid", Thread.currentThread().getId());
                try {
                    boolean ran = runOnce.runOnce(client, name, atMost, atLeast, () -> {
                        try {
                            access("run", name, 0, a, 0);
                            Thread.sleep(work);
                            access("done", name, 0, a, 0);
                        } catch (Abort | InterruptedException e) {
                            // logged where it happened
                        }
                    });
                    log.log("type", OK, "op", "runOnce", "a", a, "lock", name, "ran", ran);
                } catch (RuntimeException e) {
                    log.log("type", INDETERMINATE, "op", "runOnce", "a", a, "lock", name, "msg", String.valueOf(e));
                }
            }, "run-" + a);
            t.start();
            t.join();
            Thread.sleep(20 + random.nextInt(81));
        }
    }

    /** Thrown to end an attempt early: a stale access, a lost lease, or an unreachable resource. */
    private static final class Abort extends Exception {
        Abort() {
            super(null, null, false, false);
        }
    }

    private void attempt(String a, String lock, long hold1, long hold2) {
        long tid = Thread.currentThread().getId();
        log.log("type", "invoke", "op", "acquire", "a", a, "lock", lock, "tid", tid);
        Lease lease;
        try {
            lease = client.lock(lock).acquire(wait);
        } catch (LockTimeoutException e) {
            log.log("type", FAIL, "op", "acquire", "a", a, "lock", lock, "msg", e.getMessage());
            return;
        } catch (RuntimeException e) {
            log.log("type", INDETERMINATE, "op", "acquire", "a", a, "lock", lock, "msg", String.valueOf(e));
            return;
        }
        long token = lease.fencingToken();
        log.log("type", OK, "op", "acquire", "a", a, "lock", lock, "token", token, "holder", lease.holderId());
        Thread me = Thread.currentThread();
        lease.onLost(e -> {
            // the lease's local deadline, on this process's nanoTime as the log's times are: the analysis ends the
            // belief there if it passed before this notice (isValid() was false from then on)
            OptionalLong deadline = LeaseDeadlines.deadlineNanos(lease);
            log.log("type", "info", "op", "lost", "a", a, "lock", lock, "token", token, "msg", e.getMessage(),
                    "deadline", deadline.isPresent() ? deadline.getAsLong() : null);
            me.interrupt();
        });
        try {
            access("begin", lock, token, a, 0);
            Thread.sleep(hold1);
            long value = access("read", lock, token, a, 0);
            Thread.sleep(hold2);
            access("write", lock, token, a, value + 1);
            access("end", lock, token, a, 0);
        } catch (Abort | InterruptedException e) {
            // logged where it happened
        } finally {
            Thread.interrupted();
            log.log("type", "invoke", "op", "release", "a", a, "lock", lock, "token", token);
            try {
                lease.close();
                log.log("type", OK, "op", "release", "a", a, "lock", lock, "token", token);
            } catch (RuntimeException e) {
                log.log("type", INDETERMINATE, "op", "release", "a", a, "lock", lock, "token", token, "msg", String.valueOf(e));
            }
        }
    }

    private long access(String op, String lock, long token, String a, long value) throws Abort, InterruptedException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException();
        }
        log.log("type", "invoke", "op", op, "a", a, "lock", lock, "token", token, "v", op.equals("write") ? value : null);
        String reply;
        try {
            resOut.write(op.toUpperCase(java.util.Locale.ROOT) + " " + lock + " " + token + " " + a
                    + (op.equals("write") ? " " + value : "") + "\n");
            resOut.flush();
            reply = resIn.readLine();
        } catch (IOException e) {
            log.log("type", INDETERMINATE, "op", op, "a", a, "lock", lock, "token", token, "msg", String.valueOf(e));
            throw new Abort();
        }
        if (reply != null && reply.startsWith("OK ")) {
            long v = Long.parseLong(reply.substring(3).trim());
            log.log("type", OK, "op", op, "a", a, "lock", lock, "token", token, "v", v);
            return v;
        }
        log.log("type", FAIL, "op", op, "a", a, "lock", lock, "token", token, "msg", String.valueOf(reply));
        throw new Abort();
    }

    @Override
    public String toString() {
        return "Worker[" + id + " " + args.get("url") + " via " + resource + "]";
    }
}
