package dev.baton.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library modules' boundaries as a user's modular project meets them: a small consumer module outside the
 * reactor, compiled with {@code javac --module-path} against the built jars (failsafe runs after {@code package},
 * so the class path holds the reactor's jars), reaches the API and the SPI and cannot reach anything internal.
 */
class ModuleBoundaryIT {

    /**
     * One library module: its module name, a jar name prefix, an exported type and a public type in a package that
     * must stay hidden (null when the module has no unexported package).
     */
    private record Library(String module, String jarPrefix, String exportedType, String hiddenType,
                           List<String> dependencyJarPrefixes) {
        Library(String module, String jarPrefix, String exportedType, String hiddenType) {
            this(module, jarPrefix, exportedType, hiddenType, List.of());
        }
    }

    private static final List<Library> LIBRARIES = List.of(
            new Library("dev.baton.core", "baton-core-", "dev.baton.spi.LockBackend", "dev.baton.internal.CoreLockClient"),
            new Library("dev.baton.jdbc", "baton-jdbc-", "dev.baton.jdbc.JdbcLocks",
                    "dev.baton.jdbc.internal.ConnectionSupport"),
            new Library("dev.baton.memory", "baton-memory-", "dev.baton.memory.InMemoryLocks", null),
            new Library("dev.baton.redis", "baton-redis-", "dev.baton.redis.RedisLocks", null, List.of("lettuce-core-")));

    @TempDir
    Path dir;

    @Test
    void aConsumerModuleCompilesAgainstTheExportedApiAndSpi() throws IOException {
        for (Library lib : LIBRARIES) {
            String out = compile(lib, "consumer.ok", "import " + lib.exportedType() + ";\n"
                    + "public class Use { Class<?> c = " + simpleName(lib.exportedType()) + ".class; }\n");
            assertThat(out).as("javac output for a consumer of %s's exported API", lib.module()).isEmpty();
        }
    }

    @Test
    void aConsumerModuleCannotReachTheInternalPackages() throws IOException {
        for (Library lib : LIBRARIES) {
            if (lib.hiddenType() == null) {
                continue;
            }
            String hiddenPackage = lib.hiddenType().substring(0, lib.hiddenType().lastIndexOf('.'));
            String out = compile(lib, "consumer.bad", "import " + lib.hiddenType() + ";\n"
                    + "public class Use { Class<?> c = " + simpleName(lib.hiddenType()) + ".class; }\n");
            assertThat(out).as("javac output for a consumer of %s's internals", lib.module())
                    .contains("package " + hiddenPackage + " is declared in module " + lib.module()
                            + ", which does not export it");
        }
    }

    private static String simpleName(String type) {
        return type.substring(type.lastIndexOf('.') + 1);
    }

    /** Compiles one consumer module requiring {@code lib}; returns javac's diagnostics (empty when it compiled). */
    private String compile(Library lib, String pkg, String body) throws IOException {
        Path src = dir.resolve(pkg + "-" + lib.module());
        Path pkgDir = src.resolve(pkg.replace('.', '/'));
        Files.createDirectories(pkgDir);
        Files.writeString(src.resolve("module-info.java"), "module " + pkg + " { requires " + lib.module() + "; }\n");
        Files.writeString(pkgDir.resolve("Use.java"), "package " + pkg + ";\n" + body);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's compiler (the tests run on a JDK)").isNotNull();
        List<String> args = new ArrayList<>(List.of("-d", dir.resolve("classes-" + pkg + "-" + lib.module()).toString(),
                "--module-path", modulePath(lib),
                // javac's default class path is this JVM's: give it none, as a consumer's build would
                "--class-path", dir.toString()));
        args.add(src.resolve("module-info.java").toString());
        args.add(pkgDir.resolve("Use.java").toString());
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        javac.run(null, null, new PrintStream(err, true, StandardCharsets.UTF_8), args.toArray(String[]::new));
        return err.toString(StandardCharsets.UTF_8);
    }

    /** The library's built jar plus every other jar of the test class path (its dependencies among them). */
    private static String modulePath(Library lib) {
        List<String> jars = Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
                .filter(p -> p.endsWith(".jar"))
                .collect(Collectors.toList());
        assertThat(jars).as("the built %s jar on the test class path (run by failsafe, after package)", lib.module())
                .anyMatch(p -> Path.of(p).getFileName().toString().startsWith(lib.jarPrefix()));
        // only the library under test and the jars it needs: slf4j-api (and, for others, their own dependencies)
        return jars.stream()
                .filter(p -> {
                    String f = Path.of(p).getFileName().toString();
                    return f.startsWith(lib.jarPrefix()) || f.startsWith("slf4j-api-") || f.startsWith("baton-core-")
                            || lib.dependencyJarPrefixes().stream().anyMatch(f::startsWith);
                })
                .collect(Collectors.joining(java.io.File.pathSeparator));
    }
}
