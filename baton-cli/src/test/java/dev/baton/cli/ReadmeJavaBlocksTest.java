package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The README's Java code blocks compile as written, against the jars a user would put on the class path (this
 * module's test class path holds every backend, the in-memory one, HikariCP, the drivers and AssertJ). Each
 * {@code ```java} block must be a whole source file: its imports and one top-level class, named as nowhere else
 * in the README. So a renamed method, a moved class or a missing import in the README fails the build.
 */
class ReadmeJavaBlocksTest {
    private static final Pattern BLOCK = Pattern.compile("(?m)^```java\\n(.*?)^```", Pattern.DOTALL);
    private static final Pattern TOP_CLASS = Pattern.compile("(?m)^(?:public\\s+)?(?:final\\s+)?class\\s+(\\w+)");

    @Test
    void everyJavaBlockOfTheReadmeCompiles(@TempDir Path dir) throws IOException {
        Path readme = Path.of("..", "README.md");
        List<Block> blocks = blocks(Files.readString(readme, StandardCharsets.UTF_8));
        assertThat(blocks).as("```java blocks in %s", readme.toAbsolutePath().normalize()).hasSizeGreaterThanOrEqualTo(4);

        Map<String, Block> byClass = new HashMap<>();
        List<Path> sources = new ArrayList<>();
        for (Block block : blocks) {
            Matcher m = TOP_CLASS.matcher(block.text());
            assertThat(m.find()).as("the README's java block at line %d declares a top-level class (a whole file:"
                    + " imports and a class), so that it compiles as written", block.line()).isTrue();
            String name = m.group(1);
            Block other = byClass.put(name, block);
            assertThat(other).as("class %s is declared by the README's java blocks at lines %s and %d", name,
                    other == null ? "" : other.line(), block.line()).isNull();
            Path file = dir.resolve(name + ".java");
            Files.writeString(file, block.text(), StandardCharsets.UTF_8);
            sources.add(file);
        }

        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler).as("a JDK's compiler (javax.tools)").isNotNull();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            boolean ok = compiler.getTask(null, files, diagnostics,
                    List.of("-classpath", classPath, "-d", dir.resolve("classes").toString(), "--release", "17",
                            "-proc:none", "-Xlint:none"),
                    null, files.getJavaFileObjectsFromPaths(sources)).call();
            String errors = diagnostics.getDiagnostics().stream()
                    .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                    .map(d -> readmeLine(d, byClass) + ": " + d.getMessage(null))
                    .collect(Collectors.joining("\n"));
            assertThat(ok).as("the README's java blocks compile; errors:\n%s", errors).isTrue();
        }
    }

    @Test
    void aBrokenBlockIsCaught(@TempDir Path dir) {
        // positive control: the extraction finds a block and the same compiler refuses a misspelt method
        String readme = "text\n```java\nimport dev.baton.LockClient;\nclass Broken { void f(LockClient c) { c.lokc(\"x\"); } }\n```\n";
        List<Block> blocks = blocks(readme);
        assertThat(blocks).hasSize(1);
        assertThat(blocks.get(0).line()).isEqualTo(3);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            Path file = dir.resolve("Broken.java");
            Files.writeString(file, blocks.get(0).text());
            boolean ok = compiler.getTask(null, files, diagnostics,
                    List.of("-classpath", classPath, "-d", dir.resolve("classes").toString(), "-proc:none"),
                    null, files.getJavaFileObjectsFromPaths(List.of(file))).call();
            assertThat(ok).isFalse();
            assertThat(diagnostics.getDiagnostics()).anySatisfy(d -> assertThat(d.getMessage(null)).contains("lokc"));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A java block's text and the README line its first line of code is on. */
    record Block(String text, int line) {
    }

    static List<Block> blocks(String markdown) {
        List<Block> blocks = new ArrayList<>();
        Matcher m = BLOCK.matcher(markdown);
        while (m.find()) {
            int line = 1 + (int) markdown.substring(0, m.start(1)).chars().filter(c -> c == '\n').count();
            blocks.add(new Block(m.group(1), line));
        }
        return blocks;
    }

    private static String readmeLine(Diagnostic<? extends JavaFileObject> d, Map<String, Block> byClass) {
        if (d.getSource() == null) {
            return "README.md";
        }
        String file = Path.of(d.getSource().toUri()).getFileName().toString();
        Block block = byClass.get(file.substring(0, file.length() - ".java".length()));
        return block == null ? file : "README.md:" + (block.line() + d.getLineNumber() - 1);
    }
}
