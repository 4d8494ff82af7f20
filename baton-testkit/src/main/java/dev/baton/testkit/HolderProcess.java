package dev.baton.testkit;

import dev.baton.Lease;
import dev.baton.LockClient;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A lock holder in a separate JVM, so a test can kill it for real ({@code kill -9}): no release, no more
 * renewals, exactly what a crashed instance leaves behind. The child rebuilds the fixture from its class
 * name, acquires the lock, prints {@code HELD <token>} and waits to be killed.
 */
public final class HolderProcess implements AutoCloseable {
    private final Process process;
    private final long token;

    private HolderProcess(Process process, long token) {
        this.process = process;
        this.token = token;
    }

    /** Starts a child that holds {@code lockName} with the given lease time; returns once it holds it. */
    public static HolderProcess start(Class<? extends LockFixture> fixture, String lockName, Duration leaseTime)
            throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(List.of(java, "-Xmx64m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), HolderProcess.class.getName(), fixture.getName(),
                lockName, Long.toString(leaseTime.toMillis())));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.startsWith("HELD ")) {
            p.destroyForcibly();
            throw new AssertionError("holder process did not report holding '" + lockName + "': " + line);
        }
        return new HolderProcess(p, Long.parseLong(line.substring(5).trim()));
    }

    /** The fencing token the child was granted. */
    public long token() {
        return token;
    }

    /** Kills the child with SIGKILL and waits for it to be gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new AssertionError("holder process " + process.pid() + " did not die");
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }

    /** Child entry point: {@code <fixture class> <lock name> <lease millis>}. */
    public static void main(String[] args) throws Exception {
        LockFixture fixture = (LockFixture) Class.forName(args[0]).getConstructor().newInstance();
        if (!fixture.crossProcess()) {
            throw new IllegalStateException(fixture.name() + " is not cross-process: a fixture rebuilt in this JVM"
                    + " would not reach the test's server (use LockFixture.crash instead)");
        }
        LockClient client = fixture.newClient(ClientConfig.lease(Duration.ofMillis(Long.parseLong(args[2]))));
        Lease lease = client.lock(args[1]).acquire(Duration.ofSeconds(30));
        System.out.println("HELD " + lease.fencingToken());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

}
