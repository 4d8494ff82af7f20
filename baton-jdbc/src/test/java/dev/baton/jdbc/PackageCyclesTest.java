package dev.baton.jdbc;

import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No import cycle between baton-jdbc's strategy packages ({@code lease}, {@code session}, {@code readwrite},
 * {@code internal}, …): what two of them share lives in one that both depend on ({@code internal}). Read from the
 * compiled classes' constant pools (every class a class refers to is named there), no library needed. The root
 * package {@code dev.baton.jdbc} is left out: it is the public API (the dialects, the strategies' interfaces) that
 * every strategy implements, and the facade ({@link JdbcLocks}) that assembles them.
 */
class PackageCyclesTest {
    private static final String ROOT = "dev.baton.jdbc";

    @Test
    void theStrategyPackagesDependOnEachOtherWithoutACycle() throws Exception {
        Map<String, Set<String>> graph = packageGraph(classesDirectory());
        assertThat(graph).as("packages found").containsKeys(ROOT + ".lease", ROOT + ".session", ROOT + ".internal");
        graph.remove(ROOT);
        graph.values().forEach(deps -> deps.remove(ROOT));
        assertThat(cycle(graph)).as("a cycle between baton-jdbc's packages (graph: %s)", graph).isEmpty();
    }

    /** The check itself finds a cycle where there is one, and none where there is none. */
    @Test
    void theCheckFindsACycle() {
        Map<String, Set<String>> graph = new TreeMap<>();
        graph.put("a", new TreeSet<>(Set.of("b")));
        graph.put("b", new TreeSet<>(Set.of("c")));
        graph.put("c", new TreeSet<>());
        assertThat(cycle(graph)).isEmpty();
        graph.get("c").add("a");
        assertThat(cycle(graph)).containsExactly("a", "b", "c", "a");
    }

    private static Path classesDirectory() throws URISyntaxException {
        Path location = Path.of(JdbcLocks.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(location).as("baton-jdbc's compiled classes").isDirectory();
        return location;
    }

    /** Package → the other baton-jdbc packages its classes refer to. */
    private static Map<String, Set<String>> packageGraph(Path classes) throws IOException {
        Map<String, Set<String>> graph = new TreeMap<>();
        Pattern reference = Pattern.compile("(dev/baton/jdbc(?:/[a-z][a-z0-9_]*)*)/[A-Z][\\w$]*");
        try (Stream<Path> files = Files.walk(classes.resolve("dev/baton/jdbc"))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String from = classes.relativize(file.getParent()).toString().replace('/', '.')
                        .replace('\\', '.');
                Set<String> deps = graph.computeIfAbsent(from, k -> new TreeSet<>());
                for (String text : utf8Constants(file)) {
                    Matcher m = reference.matcher(text);
                    while (m.find()) {
                        String to = m.group(1).replace('/', '.');
                        if (!to.equals(from)) {
                            deps.add(to);
                        }
                    }
                }
            }
        }
        return graph;
    }

    /** The UTF-8 entries of a class file's constant pool: class names, descriptors, signatures among them. */
    private static List<String> utf8Constants(Path classFile) throws IOException {
        List<String> out = new ArrayList<>();
        try (InputStream raw = Files.newInputStream(classFile); DataInputStream in = new DataInputStream(raw)) {
            if (in.readInt() != 0xCAFEBABE) {
                throw new IOException(classFile + " is not a class file");
            }
            in.readUnsignedShort(); // minor
            in.readUnsignedShort(); // major
            int count = in.readUnsignedShort();
            for (int i = 1; i < count; i++) {
                int tag = in.readUnsignedByte();
                switch (tag) {
                    case 1 -> out.add(in.readUTF());
                    case 7, 8, 16, 19, 20 -> in.skipBytes(2);
                    case 15 -> in.skipBytes(3);
                    case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipBytes(4);
                    case 5, 6 -> {
                        in.skipBytes(8);
                        i++; // takes two entries
                    }
                    default -> throw new IOException(classFile + ": unknown constant pool tag " + tag);
                }
            }
        }
        return out;
    }

    /** A cycle of {@code graph} as the packages along it, first repeated at the end, or an empty list. */
    static List<String> cycle(Map<String, Set<String>> graph) {
        Set<String> done = new TreeSet<>();
        for (String start : graph.keySet()) {
            List<String> found = cycleFrom(graph, start, new ArrayDeque<>(), done);
            if (!found.isEmpty()) {
                return found;
            }
        }
        return List.of();
    }

    private static List<String> cycleFrom(Map<String, Set<String>> graph, String node, Deque<String> path,
                                          Set<String> done) {
        if (path.contains(node)) {
            List<String> cycle = new ArrayList<>();
            boolean in = false;
            for (String p : (Iterable<String>) path::descendingIterator) {
                in |= p.equals(node);
                if (in) {
                    cycle.add(p);
                }
            }
            cycle.add(node);
            return cycle;
        }
        if (done.contains(node)) {
            return List.of();
        }
        path.push(node);
        for (String next : graph.getOrDefault(node, Set.of())) {
            List<String> found = cycleFrom(graph, next, path, done);
            if (!found.isEmpty()) {
                return found;
            }
        }
        path.pop();
        done.add(node);
        return List.of();
    }
}
