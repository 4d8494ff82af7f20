package dev.baton.checker;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.faultproxy.FaultProxy;
import dev.baton.redis.RedisLocks;
import dev.baton.testkit.OwnSentinels;
import dev.baton.testkit.OwnServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static dev.baton.testkit.OwnSentinels.redisCli;
import static dev.baton.testkit.OwnSentinels.replicationField;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The positive control of the failover checks on Redis Sentinel: a Sentinel deployment of the test's own (primary,
 * replica, each an {@link OwnServer}, and {@link OwnSentinels}) fails over while the primary holds a grant its replica never
 * got, and the checker's analysis of what two clients lived through must FAIL without {@code WAIT} and PASS with
 * {@code requireReplicas=1} — every run, not most.
 *
 * <p>Why it is deterministic: the replica replicates through a {@link FaultProxy}, which the test black-holes before
 * the grant under test, so that grant is on the primary only, whatever the timing (a SIGKILL at a random moment loses
 * only the last millisecond of writes, and a checker run hoping to land in it shows the violation now and then). The
 * primary is then killed and the Sentinels promote the replica; the first client's lease (60 s, renewed every 50 s)
 * cannot learn of the loss before the second client asks, so the second is granted the lock while the first still
 * holds it by its own lease — the overlap check (e) reports. With {@code WAIT 1} the same grant is refused (no replica
 * acknowledges it) and nothing overlaps. Fencing tokens do not show it: a grant's token is at least the server's clock
 * in µs, so the promoted replica's tokens are above the lost grant's on one host.
 *
 * <p>Each run is what the checker's {@code failover} fault does (SIGKILL of the primary, Sentinel promotes the replica,
 * the old primary back as its replica), done here by the test on its own servers, with the histories written in the
 * checker's worker format and judged by {@link Analysis}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SentinelFailoverControlIT {
    private static final String MASTER = "control";
    private static final Duration LEASE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void withoutWaitAGrantTheReplicaNeverGotIsGrantedAgainAfterTheFailoverAndTheCheckerFails() throws Exception {
        Analysis.Result r = run("");
        assertThat(r.verdict()).as("verdict; the block above").isEqualTo("FAIL");
        assertThat(r.violations().get("e")).as("belief overlaps and wrong holders (e)").isPositive();
        assertThat(r.details()).anyMatch(d -> d.contains("lock-1") && d.contains("both believed they held it"));
    }

    @Test
    void withWaitTheSameFailoverRefusesTheUnreplicatedGrantAndTheCheckerPasses() throws Exception {
        Analysis.Result r = run("?requireReplicas=1&replicaTimeout=500ms");
        assertThat(r.violations().values().stream().mapToInt(Integer::intValue).sum()).as("violations; the block above")
                .isZero();
        assertThat(r.verdict()).isEqualTo("PASS");
    }

    /** One failover of an own Sentinel deployment, with the clients' options of {@code query}; the analysis. */
    private Analysis.Result run(String query) throws Exception {
        // no 5 s wait before each full sync on own Redis servers (the replica's first, the old primary's after the
        // failover), Sentinels down after OwnSentinels.DOWN_AFTER_MS, long enough not to fail over twice
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS);
             FaultProxy link = new FaultProxy("127.0.0.1", primary.port());
             OwnServer replica = OwnServer.start(OwnServer.Engine.REDIS, "--replicaof", "127.0.0.1",
                     Integer.toString(link.port()));
             OwnSentinels sentinels = OwnSentinels.watch(MASTER, primary.port())) {
            String url = sentinels.url(query);
            await().atMost(Duration.ofSeconds(60)).until(() -> redisCli(primary.port(), "info", "replication")
                    .contains("state=online") && sentinels.ready(replica.port()));
            long runStart = System.nanoTime();
            EventLog logA = new EventLog(dir.resolve("w0.0.jsonl"));
            EventLog logB = new EventLog(dir.resolve("w1.0.jsonl"));
            long cut;
            long whole;
            String lostGrant;
            String holder;
            long token;
            // client ids as the checker's workers have them, so that the analysis finds each holder's attempt
            try (LockClient a = RedisLocks.builder(url).leaseTime(LEASE).renewInterval(Duration.ofSeconds(50))
                    .clientIdPrefix("w0.0").build();
                 LockClient b = RedisLocks.builder(url).leaseTime(LEASE).renewInterval(Duration.ofSeconds(50))
                         .clientIdPrefix("w1.0").build()) {
                // a grant the replica has (acknowledged, or seen in its offset): the failover must keep it
                Lease kept = acquire(a, logA, "a0", "lock-0").orElseThrow();
                long written = replicationField(primary.port(), "master_repl_offset");
                await().atMost(Duration.ofSeconds(30)).until(() -> replicationField(replica.port(), "slave_repl_offset") >= written);
                holder = kept.holderId();
                token = kept.fencingToken();
                // the fault begins: from here on the replica gets nothing
                cut = System.nanoTime();
                link.fault(FaultProxy.Mode.BLACKHOLE);
                Optional<Lease> lost = acquire(a, logA, "a1", "lock-1");
                lostGrant = lost.map(l -> "token " + l.fencingToken()).orElse("refused");
                primary.crash();
                await().atMost(Duration.ofSeconds(60)).until(() -> sentinels.primaryPort().equals(Optional.of(replica.port()))
                        && redisCli(replica.port(), "role").startsWith("master"));
                // the old primary back, empty, as the new one's replica (what the failover fault does)
                primary.start();
                redisCli(primary.port(), "replicaof", "127.0.0.1", Integer.toString(replica.port()));
                await().atMost(Duration.ofSeconds(60)).until(() -> redisCli(replica.port(), "info", "replication")
                        .contains("state=online"));
                whole = System.nanoTime();
                Lease second = acquire(b, logB, "b0", "lock-1").orElseThrow();
                if (lost.isPresent()) {
                    assertThat(lost.get().isValid()).as("the first holder of lock-1, when the second was granted it")
                            .isTrue();
                }
                release(second, logB, "b0", "lock-1");
                lost.ifPresent(l -> release(l, logA, "a1", "lock-1"));
                release(kept, logA, "a0", "lock-0");
            } finally {
                logA.close();
                logB.close();
            }
            long stopAt = System.nanoTime();
            Scenario.Proc pa = proc(0, dir.resolve("w0.0.jsonl"), stopAt);
            Scenario.Proc pb = proc(1, dir.resolve("w1.0.jsonl"), stopAt);
            ScenarioSpec spec = new ScenarioSpec(new RedisStrategy(), url, "baton_check", 2, 2, LEASE,
                    Duration.ofSeconds(10), "failover", 1, dir, Fence.STRICT, ScenarioSpec.DEFAULT_WORKER_JVM);
            String what = "SIGKILL of primary :" + primary.port() + " with its replica cut off (grant of lock-1: "
                    + lostGrant + "), Sentinel promoted :" + replica.port() + ", :" + primary.port() + " back as its"
                    + " replica";
            Scenario.Fault f = new Scenario.Fault(0, "failover", what, 0, 0, pa.process.pid(), "lock-0", holder,
                    token, cut, whole, 1);
            Scenario.Record record = new Scenario.Record(spec, "Redis behind Sentinel " + url, "redis", List.of(pa, pb),
                    List.of(f), List.of(), List.of(), Map.of(), List.of(), List.of(), 0, runStart, whole, stopAt,
                    new ArrayList<>(List.of("failover 0: " + what)), Optional.empty());
            Analysis.Result r = new Analysis(record).analyse();
            System.out.print(Report.block(r));
            return r;
        }
    }

    /**
     * An acquisition logged as a checker worker logs it, on a thread of its own as there (the holder id names the
     * thread, and the analysis finds the attempt by it); empty if refused.
     */
    private static Optional<Lease> acquire(LockClient c, EventLog log, String id, String lock) throws Exception {
        java.util.concurrent.FutureTask<Optional<Lease>> attempt = new java.util.concurrent.FutureTask<>(
                () -> attemptHere(c, log, id, lock));
        Thread t = new Thread(attempt, "attempt-" + id);
        t.start();
        return attempt.get(60, TimeUnit.SECONDS);
    }

    private static Optional<Lease> attemptHere(LockClient c, EventLog log, String id, String lock) {
        log.log("type", "invoke", "op", "acquire", "a", id, "lock", lock, "tid", Thread.currentThread().getId());
        try {
            Lease l = c.lock(lock).acquire(Duration.ofSeconds(20));
            log.log("type", Outcome.OK.eventType(), "op", "acquire", "a", id, "lock", lock, "token", l.fencingToken(),
                    "holder", l.holderId());
            return Optional.of(l);
        } catch (RuntimeException e) {
            log.log("type", Outcome.INDETERMINATE.eventType(), "op", "acquire", "a", id, "lock", lock, "msg",
                    String.valueOf(e));
            return Optional.empty();
        }
    }

    private static void release(Lease l, EventLog log, String id, String lock) {
        log.log("type", "invoke", "op", "release", "a", id, "lock", lock, "token", l.fencingToken());
        try {
            l.close();
            log.log("type", Outcome.OK.eventType(), "op", "release", "a", id, "lock", lock, "token", l.fencingToken());
        } catch (RuntimeException e) {
            log.log("type", Outcome.INDETERMINATE.eventType(), "op", "release", "a", id, "lock", lock, "token",
                    l.fencingToken(), "msg", String.valueOf(e));
        }
    }

    /** A worker slot for the analysis: the clients ran in this JVM, so its process is a stand-in that has ended. */
    private static Scenario.Proc proc(int index, Path events, long ended) throws IOException, InterruptedException {
        Process stand = new ProcessBuilder("true").redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        stand.waitFor(10, TimeUnit.SECONDS);
        Scenario.Proc p = new Scenario.Proc(index, 0, stand, events);
        p.ended = ended;
        p.exited = ended;
        p.endCause = "stopped at the end";
        return p;
    }
}
