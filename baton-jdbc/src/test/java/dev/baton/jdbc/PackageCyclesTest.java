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
 * How baton-jdbc's packages may refer to each other, read from the compiled classes' constant pools (every class a
 * class refers to is named there), no library needed.
 * <ul>
 *   <li>The root package {@code dev.baton.jdbc} holds the public API ({@link Dialect}, {@link Strategy},
 *       {@link JdbcLockClient}, the types of the per-call strategies) and the facade: the classes whose one job is
 *       assembling the strategies ({@link #FACADE}: {@link JdbcLocks} with its nested classes, and
 *       {@code TransactionStrategies}). Only the facade refers to the strategy packages; every other root class
 *       refers to none, so the API stands without them.</li>
 *   <li>No cycle between the packages, the root's API and facade counted as two: the strategy packages
 *       ({@code lease}, {@code session}, {@code readwrite}, {@code rowlock}, {@code optimistic}, {@code scheduled})
 *       implement the API and never refer to the facade that assembles them, and what two of them share lives in
 *       one both depend on ({@code internal}).</li>
 * </ul>
 * A root class that needs a strategy package's code is either part of the facade (then it joins {@link #FACADE}) or
 * is not, and then the reference is turned around (the strategy implements an API interface) or the helper moves
 * to {@code internal}.
 */
class PackageCyclesTest {
    private static final String ROOT = "dev.baton.jdbc";
    /** The root classes that assemble the strategies (with their nested classes), by simple name. */
    static final Set<String> FACADE = Set.of("JdbcLocks", "TransactionStrategies");
    /** The facade's node in the package graph: the root package's classes of {@link #FACADE}. */
    private static final String FACADE_NODE = ROOT + " (facade)";

    @Test
    void thePackagesDependOnEachOtherWithoutACycle() throws Exception {
        Map<String, Set<String>> graph = packageGraph(references(classesDirectory()), FACADE);
        assertThat(graph).as("packages found").containsKeys(ROOT, FACADE_NODE, ROOT + ".lease", ROOT + ".session",
                ROOT + ".internal");
        assertThat(cycle(graph)).as("a cycle between baton-jdbc's packages (graph: %s)", graph).isEmpty();
    }

    @Test
    void onlyTheFacadeRefersToTheStrategyPackages() throws Exception {
        Map<String, Set<String>> references = references(classesDirectory());
        assertThat(strayReferences(references, FACADE))
                .as("root classes outside the facade %s that refer to a strategy package", FACADE).isEmpty();
        assertThat(references.get(ROOT + ".JdbcLocks$Builder")).as("the facade, read")
                .contains(ROOT + ".lease.JdbcLeaseBackend");
    }

    /**
     * The check itself finds a root class outside the facade that refers to a strategy package: with a smaller
     * facade, the classes left out of it are reported with what they refer to.
     */
    @Test
    void theFacadeCheckFindsAStrayReference() throws Exception {
        Map<String, Set<String>> references = references(classesDirectory());
        Map<String, Set<String>> stray = strayReferences(references, Set.of("JdbcLocks"));
        assertThat(stray).containsOnlyKeys(ROOT + ".TransactionStrategies");
        assertThat(stray.get(ROOT + ".TransactionStrategies")).contains(ROOT + ".rowlock.RowLockStrategy",
                ROOT + ".optimistic.OptimisticStrategy", ROOT + ".scheduled.ScheduledRuns");
        assertThat(strayReferences(references, Set.of())).containsKeys(ROOT + ".JdbcLocks$Builder",
                ROOT + ".JdbcLocks$Client", ROOT + ".TransactionStrategies");
        // and with the facade's classes among the API's, the package graph has a cycle through the root
        assertThat(cycle(packageGraph(references, Set.of()))).contains(ROOT);
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

    /** Class → the other baton-jdbc classes it refers to (binary names: {@code dev.baton.jdbc.JdbcLocks$Builder}). */
    private static Map<String, Set<String>> references(Path classes) throws IOException {
        Map<String, Set<String>> references = new TreeMap<>();
        Pattern reference = Pattern.compile("dev/baton/jdbc(?:/[a-z][a-z0-9_]*)*/[A-Z][\\w$]*");
        try (Stream<Path> files = Files.walk(classes.resolve("dev/baton/jdbc"))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String from = classes.relativize(file).toString().replace('\\', '/').replaceFirst("\\.class$", "")
                        .replace('/', '.');
                Set<String> to = references.computeIfAbsent(from, k -> new TreeSet<>());
                for (String text : utf8Constants(file)) {
                    Matcher m = reference.matcher(text);
                    while (m.find()) {
                        String name = m.group().replace('/', '.');
                        if (!name.equals(from)) {
                            to.add(name);
                        }
                    }
                }
            }
        }
        return references;
    }

    private static String packageOf(String className) {
        return className.substring(0, className.lastIndexOf('.'));
    }

    /** Whether {@code className} is in the root package and, or its enclosing class, named in {@code facade}. */
    private static boolean inFacade(String className, Set<String> facade) {
        if (!packageOf(className).equals(ROOT)) {
            return false;
        }
        String simple = className.substring(ROOT.length() + 1);
        int nested = simple.indexOf('$');
        return facade.contains(nested < 0 ? simple : simple.substring(0, nested));
    }

    /** The root classes outside {@code facade} → the classes of other baton-jdbc packages they refer to. */
    static Map<String, Set<String>> strayReferences(Map<String, Set<String>> references, Set<String> facade) {
        Map<String, Set<String>> stray = new TreeMap<>();
        references.forEach((from, to) -> {
            if (packageOf(from).equals(ROOT) && !inFacade(from, facade)) {
                Set<String> out = new TreeSet<>(to.stream().filter(t -> !packageOf(t).equals(ROOT)).toList());
                if (!out.isEmpty()) {
                    stray.put(from, out);
                }
            }
        });
        return stray;
    }

    /**
     * Package → the other packages its classes refer to, the root's {@code facade} classes counted as a package of
     * their own ({@link #FACADE_NODE}).
     */
    private static Map<String, Set<String>> packageGraph(Map<String, Set<String>> references, Set<String> facade) {
        Map<String, Set<String>> graph = new TreeMap<>();
        references.forEach((from, to) -> {
            String node = node(from, facade);
            Set<String> deps = graph.computeIfAbsent(node, k -> new TreeSet<>());
            to.stream().map(t -> node(t, facade)).filter(n -> !n.equals(node)).forEach(deps::add);
        });
        return graph;
    }

    private static String node(String className, Set<String> facade) {
        return inFacade(className, facade) ? FACADE_NODE : packageOf(className);
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
