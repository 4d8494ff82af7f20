package dev.baton.checker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The process of this host that listens on a TCP port (Linux: {@code /proc/net/tcp{,6}} and each process's
 * {@code fd} links), so the checker's faults act on the server of the URL under test and no other. Finding another
 * user's process needs root or that user.
 *
 * @param handle    the process
 * @param command   its executable's full path
 * @param arguments its arguments (without the executable)
 * @param directory its working directory
 */
record ListeningProcess(ProcessHandle handle, String command, List<String> arguments, Path directory) {
    private static final Pattern JMX_PORT = Pattern.compile("-Dcom\\.sun\\.management\\.jmxremote\\.port=(\\d+)");

    /** The process listening on this port of this host, if this user can see it. */
    static Optional<ListeningProcess> of(int port) {
        Set<String> inodes = listeningInodes(port);
        if (inodes.isEmpty()) {
            return Optional.empty();
        }
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString()
                .chars().allMatch(Character::isDigit))) {
            for (Path proc : procs) {
                if (holdsOneOf(proc, inodes)) {
                    long pid = Long.parseLong(proc.getFileName().toString());
                    Optional<ProcessHandle> h = ProcessHandle.of(pid);
                    if (h.isEmpty()) {
                        continue;
                    }
                    ProcessHandle.Info info = h.get().info();
                    Path cwd;
                    try {
                        cwd = Files.readSymbolicLink(proc.resolve("cwd"));
                    } catch (IOException e) {
                        continue;
                    }
                    return Optional.of(new ListeningProcess(h.get(), info.command().orElse(""),
                            List.of(info.arguments().orElse(new String[0])), cwd));
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** The executable's file name, lower case ({@code postgres}, {@code mariadbd}, {@code redis-server}, {@code java}). */
    String executable() {
        return Path.of(command).getFileName().toString().toLowerCase(Locale.ROOT);
    }

    /** The JMX port its command line opens ({@code -Dcom.sun.management.jmxremote.port=N}), if any. */
    Optional<Integer> jmxPort() {
        for (String a : arguments) {
            Matcher m = JMX_PORT.matcher(a);
            if (m.matches()) {
                return Optional.of(Integer.parseInt(m.group(1)));
            }
        }
        return Optional.empty();
    }

    private static boolean holdsOneOf(Path proc, Set<String> inodes) {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[") && inodes.contains(target.substring(8, target.length() - 1))) {
                        return true;
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        } catch (IOException | SecurityException e) {
            // another user's process, or gone
        }
        return false;
    }

    /** The inodes of the sockets in state LISTEN on this local port, IPv4 and IPv6. */
    private static Set<String> listeningInodes(int port) {
        String hexPort = String.format(Locale.ROOT, "%04X", port);
        return Stream.of("/proc/net/tcp", "/proc/net/tcp6").flatMap(file -> {
            try {
                return Files.readAllLines(Path.of(file), StandardCharsets.US_ASCII).stream().skip(1);
            } catch (IOException e) {
                return Stream.<String>empty();
            }
        }).map(line -> line.trim().split("\\s+"))
                .filter(f -> f.length > 9 && f[3].equals("0A") && f[1].endsWith(":" + hexPort))
                .map(f -> f[9]).collect(Collectors.toSet());
    }
}
