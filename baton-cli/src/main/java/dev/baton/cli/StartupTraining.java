package dev.baton.cli;

import org.sqlite.util.LibraryLoaderUtil;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * What {@code bin/baton} runs once after a build, in a JVM started with {@code -XX:ArchiveClassesAtExit}, to
 * make each later start faster:
 *
 * <ul>
 *   <li>extracts this platform's SQLite library from the jar into the given directory, so that each start loads
 *       it in place ({@code -Dorg.sqlite.lib.path}) instead of writing a fresh copy to the temporary directory;</li>
 *   <li>runs {@code baton run --lock … -- true} on a SQLite file of its own, and tries the same on PostgreSQL,
 *       MariaDB and Redis URLs where nothing listens (port 1), so that the classes of every backend's path are
 *       loaded and the JVM writes them into its class-data archive at exit.</li>
 * </ul>
 *
 * Nothing here is needed for {@code baton} to work: the launcher uses the archive and the library only while
 * they are newer than the jar, and the JVM ignores an archive that does not match the jar.
 */
final class StartupTraining {
    /** The name the library gets in the directory (the launcher passes it as {@code org.sqlite.lib.name}). */
    static final String SQLITE_LIBRARY = "libsqlitejdbc.so";

    private StartupTraining() {
    }

    /** {@code StartupTraining DIR}: writes {@value #SQLITE_LIBRARY} into DIR (if the jar has one for here). */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        // a library left by an earlier jar must not be loaded by this one's classes
        Files.deleteIfExists(dir.resolve(SQLITE_LIBRARY));
        boolean extracted = extractSqlite(dir);
        if (extracted) {
            System.setProperty("org.sqlite.lib.path", dir.toString());
            System.setProperty("org.sqlite.lib.name", SQLITE_LIBRARY);
        }
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
        } finally {
            for (String suffix : List.of("", "-wal", "-shm", "-journal")) {
                Files.deleteIfExists(dir.resolve("training.db" + suffix));
            }
        }
        System.exit(0);
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
