package dev.baton.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The command of {@code baton run} in a process group of its own, under a small supervisor
 * ({@code supervise.pl}, run by perl-base, which Debian marks Essential) that guarantees no member of the
 * group outlives {@code baton}:
 *
 * <ul>
 *   <li>Signals are sent to the whole group (the command and everything it started), by order of
 *       {@code baton}, once.</li>
 *   <li>When the command exits, whatever it left in its group gets SIGTERM, then SIGKILL after the grace;
 *       {@link #process()} ends only when the group is empty, so the lock is released after the last
 *       member ended.</li>
 *   <li>If {@code baton} dies, even by SIGKILL (kill -9, the kernel's OOM killer), the kernel closes its end
 *       of the control FIFO; the supervisor reads end of file and SIGKILLs the group at once. The command
 *       also has a parent-death SIGKILL (setpriv) in case the supervisor itself is killed.</li>
 * </ul>
 *
 * <p>The group is a new process group in the same session (setpgid, not setsid): the command keeps the
 * controlling terminal, but its group is not the terminal's foreground group, so the terminal's Ctrl-C and
 * Ctrl-Z reach only {@code baton} (which passes INT on once) and a command that reads the terminal is
 * stopped by SIGTTIN.
 *
 * <p>Thread safety: {@link #signal} and {@link #stop} may be called from any thread.
 */
final class CommandGroup {
    private static final String SCRIPT = loadScript();

    private final Process supervisor;
    /** Baton's end of the control FIFO, open read-write so that opening it never blocks. */
    private final RandomAccessFile control;
    /** The FIFO; the supervisor unlinks it (and its directory) once open, this only cleans up after a failure. */
    private final Path fifo;

    private CommandGroup(Process supervisor, RandomAccessFile control, Path fifo) {
        this.supervisor = supervisor;
        this.control = control;
        this.fifo = fifo;
    }

    /**
     * Starts the supervisor and the command. No parent-death signal ties the supervisor to the JVM: the kernel
     * fires one when the forking <em>thread</em> ends, and the supervisor must outlive the JVM long enough to
     * kill the group; it watches the FIFO instead. The command's parent-death signal ties it to the
     * single-threaded supervisor.
     *
     * @param command     the command and its arguments
     * @param environment variables to add to the command's environment
     * @param grace       time between SIGTERM and SIGKILL for what is left of the group
     * @throws IOException if perl or mkfifo cannot be run
     */
    static CommandGroup start(List<String> command, Map<String, String> environment, Duration grace)
            throws IOException {
        Path dir = Files.createTempDirectory("baton-run-");
        Path fifo = dir.resolve("control");
        RandomAccessFile control = null;
        try {
            mkfifo(fifo);
            control = new RandomAccessFile(fifo.toFile(), "rw");
            List<String> argv = new ArrayList<>(List.of("perl", "-e", SCRIPT, "--", fifo.toString(),
                    Long.toString(grace.toMillis())));
            argv.addAll(command);
            ProcessBuilder pb = new ProcessBuilder(argv).inheritIO();
            pb.environment().putAll(environment);
            Process supervisor = pb.start();
            return new CommandGroup(supervisor, control, fifo);
        } catch (IOException | RuntimeException e) {
            if (control != null) {
                control.close();
            }
            Files.deleteIfExists(fifo);
            Files.deleteIfExists(dir);
            throw e;
        }
    }

    private static void mkfifo(Path fifo) throws IOException {
        Process p = new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (p.waitFor() != 0) {
                throw new IOException("mkfifo " + fifo + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while creating " + fifo, e);
        }
    }

    private static String loadScript() {
        try (InputStream in = CommandGroup.class.getResourceAsStream("supervise.pl")) {
            if (in == null) {
                throw new IllegalStateException("supervise.pl is missing from the baton jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read supervise.pl from the baton jar", e);
        }
    }

    /** The supervisor: it exits with the command's status once the whole group has ended. */
    Process process() {
        return supervisor;
    }

    /** Sends a signal (INT, TERM, HUP or QUIT) to every process of the group. */
    void signal(String name) {
        switch (name) {
            case "INT" -> order('I');
            case "TERM" -> order('T');
            case "HUP" -> order('H');
            case "QUIT" -> order('Q');
            default -> throw new IllegalArgumentException("cannot pass SIG" + name + " on to the command");
        }
    }

    /** SIGTERM to the group, SIGKILL to what is left of it after the grace. */
    void stop() {
        order('S');
    }

    /** SIGKILL to the group now. */
    void kill() {
        order('K');
    }

    private synchronized void order(char c) {
        if (!supervisor.isAlive()) {
            return;
        }
        try {
            control.write(c);
        } catch (IOException e) {
            // Only if the supervisor is gone, and with it the group.
        }
    }

    /**
     * Waits for the supervisor, hence the whole group, to end.
     *
     * @return the command's status, or -1 if the group has not ended within the timeout
     */
    int awaitExit(Duration timeout) throws InterruptedException {
        return supervisor.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? supervisor.exitValue() : -1;
    }

    /** Closes baton's end of the control FIFO: a supervisor still running then SIGKILLs the group. */
    void close() {
        try {
            control.close();
            Files.deleteIfExists(fifo);
            Files.deleteIfExists(fifo.getParent());
        } catch (IOException e) {
            // nothing to do: the descriptor is gone either way, and a leftover directory is harmless
        }
    }
}
