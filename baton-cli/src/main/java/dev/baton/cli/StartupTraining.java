package dev.baton.cli;

import org.sqlite.util.LibraryLoaderUtil;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

/**
 * What {@code bin/baton} runs once after a build, in a JVM started with {@code -XX:ArchiveClassesAtExit}, to
 * make each later start faster:
 *
 * <ul>
 *   <li>extracts this platform's SQLite library from the jar into the given directory, so that each start loads
 *       it in place ({@code -Dorg.sqlite.lib.path}) instead of writing a fresh copy to the temporary directory;</li>
 *   <li>runs {@code baton run --lock … -- true} on a SQLite file of its own, or tries the same on a PostgreSQL,
 *       MariaDB, Redis or ZooKeeper URL where nothing listens (port 1; ZooKeeper for 1.5 s, as
 *       its client would keep trying for seconds), so that the classes of that backend's path are
 *       loaded and the JVM writes them into its class-data archive at exit;</li>
 *   <li>loads the classes a call loads once it reaches that backend's real server
 *       ({@code startup-classes-BACKEND.txt}, written by {@code bench/startup-classes.sh}), which those attempts
 *       never do, so that they are archived too.</li>
 * </ul>
 *
 * <p>{@code StartupTraining DIR BACKEND} trains one backend ({@link #BACKENDS}), for the archive the launcher
 * passes to a call whose URL is that backend's: one archive per backend, as mapping an archive that also holds
 * the other backends' classes costs each call more than those classes save it.
 *
 * <p>{@code StartupTraining --class-list DIR BACKEND} only writes {@code DIR/classes-BACKEND.classlist}, the
 * JDK's class list of a real call on BACKEND ({@code startup-classes-BACKEND.classlist}, which
 * {@code bench/startup-classes.sh} writes with {@code -XX:DumpLoadedClassList}; Redis only), for a static archive
 * ({@code -Xshare:dump -XX:SharedClassListFile}): its {@code @lambda-proxy} and {@code @lambda-form-invoker}
 * lines put the lambdas and method-handle classes the call spins into the archive, which the dynamic archive
 * of a training that reaches no server cannot hold. It exits 1 when the jar has no such list.
 *
 * Nothing here is needed for {@code baton} to work: the launcher uses the archive and the library only while
 * they are newer than the jar, and the JVM ignores an archive that does not match the jar.
 */
final class StartupTraining {
    /** The name the library gets in the directory (the launcher passes it as {@code org.sqlite.lib.name}). */
    static final String SQLITE_LIBRARY = "libsqlitejdbc.so";
    /** The backends trained one by one, as the launcher and {@code startup-classes-BACKEND.txt} name them. */
    static final List<String> BACKENDS = List.of("sqlite", "postgresql", "mariadb", "redis", "zookeeper");
    /** How long the ZooKeeper attempt runs before the training ends (its client would keep trying). */
    private static final Duration ZOOKEEPER_TRAINING = Duration.ofMillis(1500);

    private StartupTraining() {
    }

    /**
     * {@code StartupTraining DIR BACKEND}: runs BACKEND's path; for SQLite, first writes {@value #SQLITE_LIBRARY}
     * into DIR (if the jar has one for here).
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        if (args[0].equals("--class-list")) {
            System.exit(writeClassList(Path.of(args[1]), args[2]) ? 0 : 1);
        }
        Path dir = Path.of(args[0]);
        String backend = args[1];
        if (!BACKENDS.contains(backend)) {
            throw new IllegalArgumentException("unknown backend " + backend + "; one of " + BACKENDS);
        }
        Files.createDirectories(dir);
        boolean sqlite = backend.equals("sqlite");
        if (sqlite) {
            // a library left by an earlier jar must not be loaded by this one's classes
            Files.deleteIfExists(dir.resolve(SQLITE_LIBRARY));
        }
        if (sqlite && extractSqlite(dir)) {
            System.setProperty("org.sqlite.lib.path", dir.toString());
            System.setProperty("org.sqlite.lib.name", SQLITE_LIBRARY);
        }
        boolean sqliteOrPostgres = sqlite || backend.equals("postgresql");
        boolean jdbcProxy = backend.equals("postgresql") || backend.equals("mariadb");
        // archived as a call loads it (a Redis or ZooKeeper call starts none: nothing of it to archive)
        BatonCommand.WarmUp warmUp = new BatonCommand.WarmUp(sqliteOrPostgres, jdbcProxy);
        warmUp.start();
        warmUp.join();
        BatonCommand.configureLogging(false, false);
        PrintWriter none = new PrintWriter(Writer.nullWriter());
        Path db = dir.resolve("training.db");
        try {
            train(backend, db, none);
            loadClassesOfRealServers(backend);
        } finally {
            for (String suffix : List.of("", "-wal", "-shm", "-journal")) {
                Files.deleteIfExists(dir.resolve("training.db" + suffix));
            }
        }
        System.exit(0);
    }

    /** Runs {@code baton run} on BACKEND: on a SQLite file of its own, or on a URL where nothing listens. */
    private static void train(String backend, Path db, PrintWriter none) throws InterruptedException {
        switch (backend) {
            case "sqlite" -> run(none, "jdbc:sqlite:" + db);
            case "postgresql" -> run(none, "jdbc:postgresql://127.0.0.1:1/baton");
            case "mariadb" -> run(none, "jdbc:mariadb://127.0.0.1:1/baton");
            case "redis" -> run(none, "redis://127.0.0.1:1");
            default -> {
                // ZooKeeper's client keeps trying for the whole connection timeout (seconds); its classes are
                // loaded within the first attempts, and the JVM archives the classes loaded by its exit
                Thread zooKeeper = new Thread(() -> run(none, "zookeeper://127.0.0.1:1"), "baton-training-zookeeper");
                zooKeeper.setDaemon(true);
                zooKeeper.start();
                zooKeeper.join(ZOOKEEPER_TRAINING.toMillis());
            }
        }
    }

    private static void run(PrintWriter none, String url) {
        BatonCommand.execute(none, none, "run", "--url", url, "--lock", "baton-training", "--", "true");
    }

    /**
     * Loads (without initialising) the classes listed in {@code startup-classes-BACKEND.txt}: those a call loads
     * once it reaches BACKEND's real server, which the attempts above never do. A name that no longer exists is
     * skipped.
     */
    private static void loadClassesOfRealServers(String backend) throws IOException {
        try (InputStream in = StartupTraining.class.getResourceAsStream("startup-classes-" + backend + ".txt")) {
            if (in == null) {
                return;
            }
            ClassLoader loader = StartupTraining.class.getClassLoader();
            for (String name : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                try {
                    Class.forName(name.strip(), false, loader);
                } catch (ClassNotFoundException | LinkageError e) {
                    // gone in this build, or needs what is not here: that class is just not archived
                }
            }
        }
    }

    /**
     * Copies {@code startup-classes-BACKEND.classlist} to {@code DIR/classes-BACKEND.classlist}; false if the jar
     * has none for BACKEND.
     */
    private static boolean writeClassList(Path dir, String backend) throws IOException {
        if (!BACKENDS.contains(backend)) {
            throw new IllegalArgumentException("unknown backend " + backend + "; one of " + BACKENDS);
        }
        try (InputStream in = StartupTraining.class.getResourceAsStream("startup-classes-" + backend + ".classlist")) {
            if (in == null) {
                return false;
            }
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "classes-" + backend, ".tmp");
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, dir.resolve("classes-" + backend + ".classlist"), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
            return true;
        }
    }

    /** Copies this platform's SQLite library out of the jar; false if the jar has none for it. */
    private static boolean extractSqlite(Path dir) throws IOException {
        String resource = LibraryLoaderUtil.getNativeLibResourcePath() + "/" + LibraryLoaderUtil.getNativeLibName();
        try (InputStream in = StartupTraining.class.getResourceAsStream(resource)) {
            if (in == null) {
                return false;
            }
            Path tmp = Files.createTempFile(dir, SQLITE_LIBRARY, ".tmp");
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, dir.resolve(SQLITE_LIBRARY), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
            return true;
        }
    }
}
