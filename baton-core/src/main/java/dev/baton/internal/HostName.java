package dev.baton.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This machine's name, as client ids carry it: the name the kernel gives ({@code gethostname}), which is what
 * {@link InetAddress#getLocalHost()} starts from too. On Linux it is read from {@code /proc/sys/kernel/hostname}
 * (the calling process's UTS namespace, as {@code gethostname} answers), without the JDK's name service:
 * {@code getLocalHost()} also looks the name up, which costs about 10 ms on a cold JVM and, where the name is
 * not in {@code /etc/hosts}, a DNS query. Elsewhere, or where that file cannot be read, it is
 * {@code getLocalHost()}'s name, and {@code unknown-host} when that fails.
 */
final class HostName {

    static final Path KERNEL_HOST_NAME = Path.of("/proc/sys/kernel/hostname");

    private HostName() {
    }

    static String get() {
        return get(KERNEL_HOST_NAME);
    }

    /** The name in {@code file} (its first line, trimmed) when it has one, else the JDK's. */
    static String get(Path file) {
        String name = read(file);
        return name != null ? name : fromJdk();
    }

    private static String read(Path file) {
        if (!Files.isReadable(file)) {
            return null;
        }
        try {
            String content = Files.readString(file, StandardCharsets.UTF_8).strip();
            int eol = content.indexOf('\n');
            String name = eol < 0 ? content : content.substring(0, eol).strip();
            return name.isEmpty() ? null : name;
        } catch (IOException | RuntimeException e) {
            return null; // the JDK's name instead: what client ids carried before, never an error
        }
    }

    private static String fromJdk() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown-host";
        }
    }
}
