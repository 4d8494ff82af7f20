package dev.baton.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** What the run ran on. */
final class Machine {
    private Machine() {
    }

    static Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("cpus", String.valueOf(Runtime.getRuntime().availableProcessors()));
        m.put("cpu", firstLine(Path.of("/proc/cpuinfo"), "model name"));
        m.put("memory", firstLine(Path.of("/proc/meminfo"), "MemTotal"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        for (String server : new String[]{"postgresql", "mariadb", "sqlite", "redis", "zookeeper"}) {
            m.put(server, ServerStats.version(server) + "; " + ServerStats.durability(server));
        }
        return m;
    }

    private static String firstLine(Path file, String key) {
        try {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith(key)) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (Exception ignored) {
            // not Linux
        }
        return "?";
    }
}
