package dev.baton.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The local clusters of {@value #COMMAND}: a 3-node ZooKeeper ensemble, Redis primary + replica + 3 Sentinels, and
 * PostgreSQL primary + streaming standby, each on fixed ports of its own (never the servers of
 * {@link TestServers#START_SCRIPT}'s default run). {@link #url} runs the script, which starts what is not running
 * (and re-creates a node a failover left behind), and returns the URL it printed for the deployment.
 *
 * <p>The clusters are left running for the next test and the next build (the script finds them and starts nothing);
 * a test that fails a node over leaves the deployment usable by running the script again ({@link #url} does).
 *
 * <p>Thread-safe.
 */
public final class HaServers {
    /** The command that starts the clusters and prints their URLs. */
    public static final String COMMAND = "scripts/start-servers.sh --ha";
    /** The deployment names the script prints. */
    public static final String ZOOKEEPER = "zookeeper-ensemble";
    public static final String REDIS_SENTINEL = "redis-sentinel";
    public static final String POSTGRESQL_STANDBY = "postgresql-standby";
    private static final long TIMEOUT_SECONDS = 300;

    private HaServers() {
    }

    /**
     * Starts (or heals) the clusters and returns the URL of a deployment.
     *
     * @param deployment {@link #ZOOKEEPER}, {@link #REDIS_SENTINEL} or {@link #POSTGRESQL_STANDBY}
     * @throws AssertionError naming {@value #COMMAND} and its output if it failed or printed no such line
     */
    public static synchronized String url(String deployment) {
        Map<String, String> urls = run();
        String url = urls.get(deployment);
        if (url == null) {
            throw new AssertionError(COMMAND + " printed no '" + deployment + " <url>' line: " + urls);
        }
        return url;
    }

    /** Runs the script; its output goes to a file, never a pipe a server it starts could keep open. */
    private static Map<String, String> run() {
        Path script = OwnServer.repositoryRoot().resolve("scripts/start-servers.sh");
        List<String> cmd = new ArrayList<>(List.of("bash", script.toString(), "--ha"));
        Path out = null;
        try {
            out = Files.createTempFile("baton-ha-servers", ".log");
            Path err = Files.createTempFile("baton-ha-servers", ".err");
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(COMMAND + " did not finish within " + TIMEOUT_SECONDS + " s: "
                        + Files.readString(err, StandardCharsets.UTF_8));
            }
            String errors = Files.readString(err, StandardCharsets.UTF_8);
            Files.deleteIfExists(err);
            if (p.exitValue() != 0) {
                throw new AssertionError(COMMAND + " failed with status " + p.exitValue() + ":\n" + errors);
            }
            Map<String, String> urls = new LinkedHashMap<>();
            for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
                int space = line.indexOf(' ');
                if (space > 0) {
                    urls.put(line.substring(0, space), line.substring(space + 1).strip());
                }
            }
            return urls;
        } catch (IOException e) {
            throw new AssertionError("cannot run " + COMMAND, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + COMMAND, e);
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
}
