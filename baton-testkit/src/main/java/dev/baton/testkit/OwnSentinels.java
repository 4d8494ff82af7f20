package dev.baton.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Three Redis Sentinels of the test's own ({@link OwnServer.Engine#SENTINEL}) watching a primary of the test's own:
 * quorum 2, down after {@value #DOWN_AFTER_MS} ms, and a failover timeout (120 s) longer than any test, so the
 * Sentinels never re-point a replica that replicates through a proxy (they do that to a replica whose master address
 * differs from theirs only after the failover timeout). With the primary and its replicas as {@link OwnServer}s, a
 * Sentinel deployment a test may kill, promote and cut.
 *
 * <p>Why not a shorter down-after: at the switch to the promoted replica each Sentinel resets its view of the primary
 * ({@code sentinelResetMaster}: its failover lockout too, "we can failover again ASAP") and counts a {@code PING} as
 * pending from that moment. If reconnecting (and {@code AUTH}) and that {@code PING} take longer than the down-after
 * time, as they did with 500 ms on a loaded machine, the new primary is down at once and the Sentinels fail over a
 * second time, back to the old primary a test has just restarted, which then never becomes a replica.
 *
 * <p>Not thread-safe: one test drives one deployment.
 */
public final class OwnSentinels implements AutoCloseable {
    /**
     * The Sentinels' {@code down-after-milliseconds}: long enough that a slow reconnect to a just-promoted primary is
     * not taken for its death (see the class doc); each failover starts this long after the primary died.
     */
    public static final int DOWN_AFTER_MS = 3000;
    private final String master;
    private final List<OwnServer> nodes = new ArrayList<>();

    private OwnSentinels(String master) {
        this.master = master;
    }

    /**
     * Starts three Sentinels watching the primary on {@code primaryPort} of this host under the name {@code master}.
     *
     * @throws AssertionError if one did not start (those started are stopped)
     */
    public static OwnSentinels watch(String master, int primaryPort) {
        return watch(master, primaryPort, new String[0]);
    }

    /**
     * As {@link #watch(String, int)}, each Sentinel with further options after the monitor's: {@code "--requirepass",
     * "p"} for Sentinels that ask for a password, {@code "--sentinel", "auth-pass", master, "p"} for a primary that
     * does. (This class's own checks, {@link #ready} and {@link #primaryPort}, ask without a password.)
     *
     * @throws AssertionError if one did not start (those started are stopped)
     */
    public static OwnSentinels watch(String master, int primaryPort, String... options) {
        OwnSentinels s = new OwnSentinels(master);
        List<String> args = new ArrayList<>(List.of(
                "--sentinel", "monitor", master, "127.0.0.1", Integer.toString(primaryPort), "2",
                "--sentinel", "down-after-milliseconds", master, Integer.toString(DOWN_AFTER_MS),
                "--sentinel", "failover-timeout", master, "120000"));
        args.addAll(List.of(options));
        try {
            for (int i = 0; i < 3; i++) {
                s.nodes.add(OwnServer.start(OwnServer.Engine.SENTINEL, args.toArray(String[]::new)));
            }
        } catch (RuntimeException | Error e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** The URL of the deployment: {@code redis-sentinel://h:p,h:p,h:p/0<query>#master}. */
    public String url(String query) {
        return "redis-sentinel://" + String.join(",", nodes.stream().map(n -> "127.0.0.1:" + n.port()).toList())
                + "/0" + query + "#" + master;
    }

    /** The Sentinels' ports. */
    public List<Integer> ports() {
        return nodes.stream().map(OwnServer::port).toList();
    }

    /** Whether every Sentinel knows the replica on {@code replicaPort} and the other two (a quorum, and a majority). */
    public boolean ready(int replicaPort) {
        for (OwnServer s : nodes) {
            if (!redisCli(s.port(), "sentinel", "ckquorum", master).startsWith("OK 3 usable")
                    || !redisCli(s.port(), "sentinel", "replicas", master).contains(Integer.toString(replicaPort))) {
                return false;
            }
        }
        return true;
    }

    /** The primary's port as the first Sentinel that answers names it. */
    public Optional<Integer> primaryPort() {
        for (OwnServer s : nodes) {
            String[] hp = redisCli(s.port(), "sentinel", "get-master-addr-by-name", master).strip().split("\\R");
            if (hp.length == 2) {
                return Optional.of(Integer.parseInt(hp[1].strip()));
            }
        }
        return Optional.empty();
    }

    /**
     * {@code redis-cli --raw} to a server of this host (its output through a file, never a pipe); empty if it did not
     * answer within 10 s.
     *
     * @throws UncheckedIOException if {@code redis-cli} cannot be run
     */
    public static String redisCli(int port, String... args) {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "--raw", "-h", "127.0.0.1", "-p",
                Integer.toString(port)));
        cmd.addAll(List.of(args));
        Path out = null;
        try {
            out = Files.createTempFile("baton-redis-cli", ".out");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "";
            }
            return Files.readString(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // a temporary file left behind
                }
            }
        }
    }

    /** A field of the server's {@code INFO replication} as a number ({@code master_repl_offset}), or -1. */
    public static long replicationField(int port, String name) {
        for (String line : redisCli(port, "info", "replication").split("\\R")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).strip());
            }
        }
        return -1;
    }

    /** Stops the Sentinels and deletes their directories. Idempotent. */
    @Override
    public void close() {
        nodes.forEach(OwnServer::close);
    }
}
