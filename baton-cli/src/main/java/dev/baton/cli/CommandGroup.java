package dev.baton.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
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
 *   <li>The supervisor notes on the boot-time clock ({@code /proc/uptime}, which keeps counting while
 *       {@code baton} is stopped) when the group ended: {@link #endedNanos()} places that moment on
 *       {@code System.nanoTime()}, so a {@code baton} that was stopped (SIGSTOP, a long GC pause) and sees the
 *       end only later can tell whether it came before the lease's deadline.</li>
 *   <li>If {@code baton} dies, even by SIGKILL (kill -9, the kernel's OOM killer), the kernel closes its end
 *       of the control FIFO; the supervisor reads end of file and SIGKILLs the group at once. The command
 *       also has a parent-death SIGKILL (the supervisor's prctl on x86_64 and arm64 Linux, else setpriv) in case
 *       the supervisor itself is killed.</li>
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
    /** Baton's end of the file the supervisor writes the group's end into (unlinked by the supervisor). */
    private final RandomAccessFile ended;
    private final Path endedPath;
    /** The boot-time clock in centiseconds just before the command started, or -1 if it cannot be read. */
    private final long uptimeAtStart;
    /** {@code System.nanoTime()} read just after {@link #uptimeAtStart}. */
    private final long nanosAtStart;

    private CommandGroup(Process supervisor, RandomAccessFile control, Path fifo, RandomAccessFile ended,
                         Path endedPath, long uptimeAtStart, long nanosAtStart) {
        this.supervisor = supervisor;
        this.control = control;
        this.fifo = fifo;
        this.ended = ended;
        this.endedPath = endedPath;
        this.uptimeAtStart = uptimeAtStart;
        this.nanosAtStart = nanosAtStart;
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
        Path dir = privateDirectory();
        Path fifo = dir.resolve("control");
        Path endedPath = dir.resolve("ended");
        RandomAccessFile control = null;
        RandomAccessFile ended = null;
        try {
            mkfifo(fifo);
            control = new RandomAccessFile(fifo.toFile(), "rw");
            Files.createFile(endedPath);
            ended = new RandomAccessFile(endedPath.toFile(), "r");
            List<String> argv = new ArrayList<>(List.of("perl", "-e", SCRIPT, "--", fifo.toString(),
                    endedPath.toString(), Long.toString(grace.toMillis())));
            argv.addAll(command);
            ProcessBuilder pb = new ProcessBuilder(argv).inheritIO();
            pb.environment().putAll(environment);
            // in this order: a pause between the two reads only places the end later, never earlier
            long uptime = uptimeCentis();
            long nanos = System.nanoTime();
            Process supervisor = pb.start();
            return new CommandGroup(supervisor, control, fifo, ended, endedPath, uptime, nanos);
        } catch (IOException | RuntimeException e) {
            if (control != null) {
                control.close();
            }
            if (ended != null) {
                ended.close();
            }
            Files.deleteIfExists(fifo);
            Files.deleteIfExists(endedPath);
            Files.deleteIfExists(dir);
            throw e;
        }
    }

    /** How many names {@link #privateDirectory()} tries before it gives up. */
    private static final int DIRECTORY_ATTEMPTS = 100;

    /**
     * A new directory {@code baton-run-N} in the temporary directory, readable by this user only, as
     * {@link Files#createTempDirectory} makes it but without its {@code SecureRandom}, whose set-up cost every call
     * a few milliseconds. The name need not be secret: the directory is created (mode 700) by one {@code mkdir},
     * which fails if anything, a link too, has that name already; then another name is tried.
     */
    static Path privateDirectory() throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        FileAttribute<Set<PosixFilePermission>> ownerOnly = PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------"));
        FileAlreadyExistsException taken = null;
        for (int attempt = 0; attempt < DIRECTORY_ATTEMPTS; attempt++) {
            Path dir = tmp.resolve("baton-run-" + Long.toUnsignedString(ThreadLocalRandom.current().nextLong()));
            try {
                return Files.createDirectory(dir, ownerOnly);
            } catch (FileAlreadyExistsException e) {
                taken = e;
            }
        }
        throw new IOException("could not create a directory of its own in " + tmp + ": " + DIRECTORY_ATTEMPTS
                + " names were taken", taken);
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

    /** The boot-time clock ({@code /proc/uptime}) in centiseconds, or -1 if it cannot be read (not Linux). */
    private static long uptimeCentis() {
        try {
            return centis(Files.readString(Path.of("/proc/uptime")));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** "350735.47 1234.50" (or "350735.47") → 35073547; -1 if it is not that. */
    static long centis(String uptime) {
        String[] fields = uptime.strip().split("\\s+");
        if (fields.length == 0 || !fields[0].matches("\\d{1,15}\\.\\d{2}")) {
            return -1;
        }
        return Long.parseLong(fields[0].replace(".", ""));
    }

    /**
     * When the group ended, on {@code System.nanoTime()}, as the supervisor noted it on the boot-time clock: no
     * earlier than it really ended (the clock's hundredths are rounded up, and a suspend of the machine between
     * the start and the end only makes it later); empty while the group runs, or if the time is unknown (no
     * {@code /proc/uptime}, a supervisor killed before it could write).
     */
    OptionalLong endedNanos() {
        if (uptimeAtStart < 0) {
            return OptionalLong.empty();
        }
        String written;
        synchronized (ended) {
            try {
                byte[] bytes = new byte[64];
                int n = ended.getChannel().read(java.nio.ByteBuffer.wrap(bytes), 0);
                written = n <= 0 ? "" : new String(bytes, 0, n, StandardCharsets.US_ASCII);
            } catch (IOException e) {
                return OptionalLong.empty();
            }
        }
        long at = centis(written);
        if (at < 0) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(nanosAtStart + TimeUnit.MILLISECONDS.toNanos((at - uptimeAtStart + 1) * 10));
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
            ended.close();
            Files.deleteIfExists(fifo);
            Files.deleteIfExists(endedPath);
            Files.deleteIfExists(fifo.getParent());
        } catch (IOException e) {
            // nothing to do: the descriptor is gone either way, and a leftover directory is harmless
        }
    }
}
