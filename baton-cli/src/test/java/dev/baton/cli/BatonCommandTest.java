package dev.baton.cli;

import dev.baton.Lease;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sqlite.SQLiteDataSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs {@code baton} in-process: argument errors, and {@code list} on an embedded SQLite file. */
class BatonCommandTest {

    /** What one in-process run printed and returned. */
    record Result(int status, String out, String err) {
        List<String> errLines() {
            return err.lines().toList();
        }
    }

    static Result baton(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = BatonCommand.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(status, out.toString(), err.toString());
    }

    static Stream<List<String>> badArguments() {
        return Stream.of(
                List.of("run", "--lock", "x", "--wait", "5x", "--", "true"),
                List.of("run", "--lock", "x", "--wait", "-1s", "--", "true"),
                List.of("run", "--lock", "x", "--grace", "soon", "--", "true"),
                List.of("run", "--lock", "", "--", "true"),
                List.of("run", "--lock", "x"),
                List.of("run", "--lock", "x", "--"),
                List.of("run", "--", "true"),
                List.of("run", "--lock", "x", "--lease", "50ms", "--", "true"),
                List.of("run", "--lock", "x", "--lease", "0", "--", "true"),
                List.of("run", "--lock", "x", "--url", "jdbc:oracle:thin:@db:1521/x", "--", "true"),
                List.of("run", "--lock", "x", "--url", "redis://localhost", "--", "true"),
                List.of("run", "--lock", "x", "--no-such-option", "--", "true"),
                List.of("list", "--url", "http://example.invalid/"),
                List.of("frobnicate"));
    }

    @ParameterizedTest
    @MethodSource("badArguments")
    void badArgumentsExit64WithOneLine(List<String> args) {
        Result r = baton(args.toArray(String[]::new));

        assertThat(r.status()).as("status of %s", args).isEqualTo(ExitCodes.USAGE);
        assertThat(r.errLines()).as("stderr of %s", args).hasSize(1);
        assertThat(r.err()).startsWith("baton: ").doesNotContain("\tat ").doesNotContain("Exception");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void badTableNameExits64(@TempDir Path dir) {
        Result r = baton("list", "--table", "Bad-Name", "--url", "jdbc:sqlite:" + dir.resolve("t.db"));

        assertThat(r.status()).isEqualTo(64);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).startsWith("baton: ").contains("Bad-Name");
    }

    @Test
    void unknownUrlNamesTheSupportedPrefixes() {
        Result r = baton("list", "--url", "jdbc:oracle:thin:@db:1521/x");

        assertThat(r.status()).isEqualTo(64);
        assertThat(r.err()).contains("jdbc:oracle:thin:@db:1521/x")
                .contains("jdbc:postgresql:").contains("jdbc:mariadb:").contains("jdbc:mysql:")
                .contains("jdbc:sqlite:");
    }

    @Test
    void passwordIsHiddenInMessages() {
        Result r = baton("list", "--url", "jdbc:h2:mem:x;USER=sa;PASSWORD=hunter2");

        assertThat(r.err()).doesNotContain("hunter2").contains("PASSWORD=***");
        assertThat(DatabaseUrl.hidePassword("jdbc:postgresql://u:hunter2@h/db?password=hunter2&x=1"))
                .isEqualTo("jdbc:postgresql://u:***@h/db?password=***&x=1");
    }

    @Test
    void mysqlUrlsUseTheMariadbDriver() {
        DatabaseUrl url = DatabaseUrl.parse("jdbc:mysql://h:3306/db?user=root", "--url");

        assertThat(url.kind()).isEqualTo(DatabaseUrl.Kind.MARIADB);
        assertThat(url.jdbcUrl()).isEqualTo("jdbc:mariadb://h:3306/db?user=root");
        assertThat(url.shown()).isEqualTo("jdbc:mysql://h:3306/db?user=root");
    }

    @Test
    void urlComesFromOptionThenEnvironmentThenHome(@TempDir Path home) {
        assertThat(DatabaseUrl.resolve("jdbc:sqlite:/a.db", java.util.Map.of("BATON_URL", "jdbc:sqlite:/b.db"), home)
                .jdbcUrl()).isEqualTo("jdbc:sqlite:/a.db");
        assertThat(DatabaseUrl.resolve(null, java.util.Map.of("BATON_URL", "jdbc:sqlite:/b.db"), home)
                .jdbcUrl()).isEqualTo("jdbc:sqlite:/b.db");
        DatabaseUrl fallback = DatabaseUrl.resolve(null, java.util.Map.of(), home);
        assertThat(fallback.jdbcUrl()).isEqualTo("jdbc:sqlite:" + home.resolve(".baton/baton.db"));
        assertThat(fallback.isDefaultSqlite(home)).isTrue();
    }

    @Test
    void noSubcommandPrintsUsageAndExits64() {
        Result r = baton();

        assertThat(r.status()).isEqualTo(64);
        assertThat(r.err()).contains("Usage: baton");
    }

    @Test
    void helpMentionsThatTheTableIsCreated() {
        Result r = baton("run", "--help");

        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("created").contains("--wait").contains("BATON_FENCING_TOKEN");
    }

    @Test
    void listShowsHolderTokenAndFreeLocks(@TempDir Path dir) {
        String url = "jdbc:sqlite:" + dir.resolve("locks.db");
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(url);
        try (JdbcLockClient locks = JdbcLocks.builder(ds).createTableIfMissing().build()) {
            locks.lock("released").tryAcquire().orElseThrow().close();
            try (Lease held = locks.lock("held").tryAcquire().orElseThrow()) {
                Result r = baton("list", "--url", url);

                assertThat(r.status()).as(r.err()).isZero();
                List<String> lines = r.out().lines().toList();
                assertThat(lines).hasSize(3);
                assertThat(lines.get(0).split("\\s+")).containsExactly("NAME", "HOLDER", "TOKEN", "ACQUIRED",
                        "EXPIRES");
                assertThat(lines.get(1).split("\\s+")).startsWith("held", held.holderId(),
                        Long.toString(held.fencingToken()));
                assertThat(lines.get(2).split("\\s+")).startsWith("released", "-");
                assertThat(lines.get(1).split("\\s+")[3]).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
            }
        }
    }
}
