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
 * A waiter in a separate JVM, so a test can kill it for real ({@code kill -9}) while it waits in line: no
 * withdrawal, no more heartbeats, exactly what a crashed instance leaves behind. The child rebuilds the fixture from
 * its class name, prints {@code WAITING} and waits (at most ten minutes) for the lock; if it gets it, it prints
 * {@code HELD <token>} and keeps it until killed. The test itself checks, on its server, that the child's place is in
 * line before it relies on it ({@code WAITING} is printed before the first attempt).
 */
public final class WaiterProcess implements AutoCloseable {
    private final Process process;

    private WaiterProcess(Process process) {
        this.process = process;
    }

    /** Starts a child that waits for {@code lockName} with the given lease time; returns once it is about to ask. */
    public static WaiterProcess start(Class<? extends LockFixture> fixture, String lockName, Duration leaseTime)
            throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(List.of(java, "-Xmx64m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), WaiterProcess.class.getName(), fixture.getName(),
                lockName, Long.toString(leaseTime.toMillis())));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.equals("WAITING")) {
            p.destroyForcibly();
            throw new AssertionError("waiter process did not report waiting for '" + lockName + "': " + line);
        }
        return new WaiterProcess(p);
    }

    /** Kills the child with SIGKILL and waits for it to be gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new AssertionError("waiter process " + process.pid() + " did not die");
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
                    + " would not reach the test's server");
        }
        LockClient client = fixture.newClient(ClientConfig.lease(Duration.ofMillis(Long.parseLong(args[2]))));
        System.out.println("WAITING");
        System.out.flush();
        Lease lease = client.lock(args[1]).acquire(Duration.ofMinutes(10));
        System.out.println("HELD " + lease.fencingToken());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
