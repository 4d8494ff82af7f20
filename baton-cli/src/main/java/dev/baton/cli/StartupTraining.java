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
 *   <li>runs {@code baton run --lock … -- true} on a SQLite file of its own, and tries the same on PostgreSQL,
 *       MariaDB, Redis and ZooKeeper URLs where nothing listens (port 1; ZooKeeper for 1.5 s, as
 *       its client would keep trying for seconds), so that the classes of every backend's path are
 *       loaded and the JVM writes them into its class-data archive at exit;</li>
 *   <li>loads the classes a call loads once it reaches a real server ({@value #CLASS_LIST}, written by
 *       {@code bench/startup-classes.sh}), which those attempts never do, so that they are archived too.</li>
 * </ul>
 *
 * Nothing here is needed for {@code baton} to work: the launcher uses the archive and the library only while
 * they are newer than the jar, and the JVM ignores an archive that does not match the jar.
 */
final class StartupTraining {
    /** The name the library gets in the directory (the launcher passes it as {@code org.sqlite.lib.name}). */
    static final String SQLITE_LIBRARY = "libsqlitejdbc.so";
    /** The classes a call loads on real servers, one name a line; written by bench/startup-classes.sh. */
    static final String CLASS_LIST = "startup-classes.txt";
    /** How long the ZooKeeper attempt runs before the training ends (its client would keep trying). */
    private static final Duration ZOOKEEPER_TRAINING = Duration.ofMillis(1500);

    private StartupTraining() {
    }

    /** {@code StartupTraining DIR}: writes {@value #SQLITE_LIBRARY} into DIR (if the jar has one for here). */
    public static void main(String[] args) throws IOException, InterruptedException {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        // a library left by an earlier jar must not be loaded by this one's classes
        Files.deleteIfExists(dir.resolve(SQLITE_LIBRARY));
        boolean extracted = extractSqlite(dir);
        if (extracted) {
            System.setProperty("org.sqlite.lib.path", dir.toString());
            System.setProperty("org.sqlite.lib.name", SQLITE_LIBRARY);
        }
        BatonCommand.WarmUp warmUp = new BatonCommand.WarmUp(true, true); // archived as a call loads it
        warmUp.start();
        warmUp.join();
        BatonCommand.configureLogging(false, false);
        PrintWriter none = new PrintWriter(Writer.nullWriter());
        Path db = dir.resolve("training.db");
        try {
            BatonCommand.execute(none, none, "run", "--url", "jdbc:sqlite:" + db, "--lock", "baton-training",
                    "--", "true");
            for (String url : List.of("jdbc:postgresql://127.0.0.1:1/baton", "jdbc:mariadb://127.0.0.1:1/baton",
                    "redis://127.0.0.1:1")) {
                BatonCommand.execute(none, none, "run", "--url", url, "--lock", "baton-training", "--", "true");
            }
            // ZooKeeper's client keeps trying for the whole connection timeout (seconds); its classes are loaded
            // within the first attempts, and the JVM archives the classes loaded by its exit
            Thread zooKeeper = new Thread(() -> BatonCommand.execute(none, none, "run", "--url",
                    "zookeeper://127.0.0.1:1", "--lock", "baton-training", "--", "true"), "baton-training-zookeeper");
            zooKeeper.setDaemon(true);
            zooKeeper.start();
            zooKeeper.join(ZOOKEEPER_TRAINING.toMillis());
            loadClassesOfRealServers();
        } finally {
            for (String suffix : List.of("", "-wal", "-shm", "-journal")) {
                Files.deleteIfExists(dir.resolve("training.db" + suffix));
            }
        }
        System.exit(0);
    }

    /**
     * Loads (without initialising) the classes listed in {@value #CLASS_LIST}: those a call loads once it reaches
     * a real server, which the attempts above never do. A name that no longer exists is skipped.
     */
    private static void loadClassesOfRealServers() throws IOException {
        try (InputStream in = StartupTraining.class.getResourceAsStream(CLASS_LIST)) {
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
