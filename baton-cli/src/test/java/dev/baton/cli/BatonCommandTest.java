package dev.baton.cli;

import dev.baton.Lease;
import dev.baton.internal.Secrets;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.JdbcLocks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sqlite.SQLiteDataSource;

import dev.baton.LockInfo;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
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
                List.of("run", "--lock", "x", "--url", "mongodb://localhost", "--", "true"),
                List.of("run", "--lock", "x", "--url", "redis://", "--", "true"),
                List.of("run", "--lock", "x", "--no-such-option", "--", "true"),
                List.of("run", "--lock", "x", "-n", "--wait", "1s", "--", "true"),
                List.of("run", "--lock", "x", "-c", "echo", "--", "true"),
                List.of("run", "--lock", "x", "-c"),
                List.of("run", "--lock", "x", "--wait", "1h30", "--", "true"),
                List.of("run", "--lock", "x", "--wait", "30m1h", "--", "true"),
                List.of("run", "--lock", "x", "--lease", "1.5ms", "--", "true"),
                List.of("list", "--url", "http://example.invalid/"),
                List.of("frobnicate"));
    }

    /** -c runs a shell string with the lock's variables; -n does not wait for a held lock (75 at once). */
    @Test
    void dashCRunsAShellStringAndDashNDoesNotWait(@TempDir Path dir) throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("c.db");
        Path seen = dir.resolve("seen");
        Result c = baton("run", "--url", url, "--lock", "dash-c", "-c",
                "echo \"$BATON_LOCK $BATON_FENCING_TOKEN\" > '" + seen + "'; exit 3");
        assertThat(c.status()).as("stderr: %s", c.err()).isEqualTo(3);
        assertThat(java.nio.file.Files.readString(seen)).matches("dash-c [0-9]+\\n");

        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(url);
        try (JdbcLockClient locks = JdbcLocks.builder(ds).createTableIfMissing().build();
             Lease held = locks.lock("dash-n").acquire(java.time.Duration.ZERO)) {
            Result n = baton("run", "--url", url, "--lock", "dash-n", "-n", "--", "true");
            assertThat(n.status()).as("stderr: %s", n.err()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            assertThat(n.err()).contains("not acquired within 0 ms");
        }
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
        assertThat(Secrets.hide("jdbc:postgresql://u:hunter2@h/db?password=hunter2&x=1"))
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
    void listShowsStateTokenHolderAndNameLast(@TempDir Path dir) {
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
                assertThat(lines.get(0).split("\\s+")).containsExactly("STATE", "TOKEN", "EXPIRES", "ACQUIRED",
                        "HOLDER", "NAME");
                assertThat(lines.get(1).split("\\s+")).containsExactly("held", Long.toString(held.fencingToken()),
                        lines.get(1).split("\\s+")[2], lines.get(1).split("\\s+")[3], held.holderId(), "held");
                assertThat(lines.get(2).split("\\s+")).startsWith("free").endsWith("-", "released");
                assertThat(lines.get(1).split("\\s+")[3]).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
            }
        }
    }

    @Test
    void listKeepsColumnsAlignedWithA512CharacterName(@TempDir Path dir) {
        List<LockInfo> locks = List.of(
                new LockInfo("x".repeat(512), "host/1/abc#1", 7, Instant.EPOCH, Instant.EPOCH.plusSeconds(10), true),
                new LockInfo("short", null, 12345, Instant.EPOCH, Instant.EPOCH, false));
        StringWriter out = new StringWriter();

        ListCommand.print(locks, new PrintWriter(out));

        List<String> lines = out.toString().lines().toList();
        int nameColumn = lines.get(0).indexOf("NAME");
        int holderColumn = lines.get(0).indexOf("HOLDER");
        assertThat(lines.get(1).substring(nameColumn)).isEqualTo("x".repeat(512));
        assertThat(lines.get(2).substring(nameColumn)).isEqualTo("short");
        assertThat(lines.get(1).substring(holderColumn)).startsWith("host/1/abc#1 ");
        assertThat(nameColumn).as("columns before the name do not depend on its length").isLessThan(100);
    }

    @Test
    void namesShowInvisibleAndBidirectionalCharactersAsEscapes() {
        assertThat(Names.escape("a\u202Eb")).isEqualTo("a\\u202Eb");
        assertThat(Names.escape("pay\u200Broll")).isEqualTo("pay\\u200Broll");
        assertThat(Names.escape("\uFEFFbom")).isEqualTo("\\uFEFFbom");
        assertThat(Names.escape("line\nbreak\u2028")).isEqualTo("line\\u000Abreak\\u2028");
        assertThat(Names.escape("nb\u00A0sp")).isEqualTo("nb\\u00A0sp");
        assertThat(Names.escape("tag\uDB40\uDC41")).isEqualTo("tag\\U000E0041");
        assertThat(Names.escape(" lock ")).isEqualTo("\\u0020lock\\u0020");
        assertThat(Names.escape("a\\u202Eb")).as("a literal backslash is doubled, so it cannot pass for an escape")
                .isEqualTo("a\\\\u202Eb");
        assertThat(Names.escape("nightly report é 日本 🔒")).isEqualTo("nightly report é 日本 🔒");
    }

    @Test
    void listJsonEscapesEveryNonAsciiCharacter() throws Exception {
        StringWriter out = new StringWriter();
        ListCommand.printJson(List.of(new LockInfo("a\u202Eb", null, 3, Instant.EPOCH, Instant.EPOCH, false)),
                new PrintWriter(out));

        assertThat(out.toString()).contains("\"a\\u202Eb\"").doesNotContain("\u202E");
        var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.toString());
        assertThat(tree.get(0).get("name").asText()).isEqualTo("a\u202Eb");
        assertThat(tree.get(0).get("state").asText()).isEqualTo("free");
        assertThat(tree.get(0).get("token").asLong()).isEqualTo(3);
        assertThat(tree.get(0).get("holder").isNull()).isTrue();
    }

    @Test
    void listNeverCreatesTheSqliteFile(@TempDir Path dir) {
        Path file = dir.resolve("absent.db");

        Result r = baton("list", "--url", "jdbc:sqlite:" + file);

        assertThat(r.status()).isEqualTo(ExitCodes.NO_TABLE);
        assertThat(r.err()).contains(file.toString()).contains("does not exist");
        assertThat(file).doesNotExist();
    }

    @Test
    void listWithATableTypoSaysThereIsNoSuchTableAndCreatesNothing(@TempDir Path dir) throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("locks.db");
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(url);
        JdbcLocks.builder(ds).createTableIfMissing().build().close();

        Result r = baton("list", "--url", url, "--table", "baton_lokcs");

        assertThat(r.status()).isEqualTo(ExitCodes.NO_TABLE);
        assertThat(r.errLines()).containsExactly("baton: no lock table 'baton_lokcs' in SQLite file "
                + dir.resolve("locks.db") + " (is --table right?); 'baton run' creates it");
        try (var c = ds.getConnection(); var rs = c.createStatement().executeQuery(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'baton_lokcs%'")) {
            rs.next();
            assertThat(rs.getInt(1)).isZero();
        }
    }

    @Test
    void sessionStrategyOnSqliteIsRefusedInTheCliWords(@TempDir Path dir) {
        Result r = baton("run", "--lock", "x", "--strategy", "session", "--url", "jdbc:sqlite:" + dir.resolve("x.db"),
                "--", "true");

        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--strategy lease").doesNotContain("Strategy.").doesNotContain("LEASE");
    }

    @Test
    void libraryWordsAreSaidAsOptions() {
        assertThat(BatonCommand.cliWords("SQLite has no session locks (use Strategy.LEASE)"))
                .isEqualTo("SQLite has no session locks (use --strategy lease)");
        assertThat(BatonCommand.cliWords("olderThan must be at least 1 s")).isEqualTo("--older-than must be at least 1 s");
        assertThat(BatonCommand.cliWords("Apply the DDL in x.sql (shipped in baton-jdbc), or call createTableIfMissing()"
                + " on the builder")).doesNotContain("createTableIfMissing").doesNotContain("builder");
    }

    /** The library's bound would say {@code olderThan must be at most 3650 days (PT87600H), was PT100000H}. */
    @Test
    void purgeSaysItsUpperBoundInTheCommandsWords(@TempDir Path dir) {
        Result r = baton("purge", "--older-than", "100000h", "--url", "jdbc:sqlite:" + dir.resolve("x.db"));

        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--older-than must be at most 87600h").contains("was 100000h")
                .doesNotContain("olderThan").doesNotContain("PT");
    }

    @Test
    void purgeRefusesLessThanOneSecond(@TempDir Path dir) {
        Result r = baton("purge", "--older-than", "500ms", "--url", "jdbc:sqlite:" + dir.resolve("x.db"));

        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--older-than must be at least 1s, was 500ms");
    }

    @Test
    void statusAndReleaseRefuseAnInvalidName() {
        assertThat(baton("status", "").status()).isEqualTo(ExitCodes.USAGE);
        assertThat(baton("release", "a\u0000b").status()).isEqualTo(ExitCodes.USAGE);
        assertThat(baton("release", "x", "--token", "seven").status()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void versionIsTheBuildsProjectVersion() {
        String expected = System.getProperty("baton.expectedVersion");
        assertThat(expected).as("set by the pom's surefire configuration").isNotBlank();

        assertThat(baton("version").out().strip()).isEqualTo("baton " + expected);
        assertThat(baton("--version").out().strip()).isEqualTo("baton " + expected);
        assertThat(baton("check", "--version").out().strip()).isEqualTo("baton " + expected);
    }

    @Test
    void helpListsEveryCommandAndTheExitStatuses() {
        Result r = baton("help");

        assertThat(r.status()).isZero();
        for (String command : List.of("run", "status", "list", "release", "purge", "check", "version", "completion")) {
            assertThat(r.out()).containsPattern("(?m)^  " + command + " ");
        }
        for (String status : List.of("64", "66", "69", "70", "75", "76", "77")) {
            assertThat(r.out()).containsPattern("(?m)^  " + status + " ");
        }
    }

    @Test
    void helpTextsNameEveryBackendAndEveryExitStatusOfRun() {
        // the help says what the README says: every backend's URL, every status run can exit with
        for (String[] help : List.of(new String[] {"--help"}, new String[] {"check", "--help"},
                new String[] {"run", "--help"})) {
            Result r = baton(help);
            assertThat(r.status()).isZero();
            String unwrapped = r.out().replaceAll("\\n\\s*", "");   // picocli wraps lines, also inside a URL
            assertThat(unwrapped).as(String.join(" ", help)).contains("jdbc:postgresql:").contains("jdbc:mariadb:")
                    .contains("jdbc:mysql:").contains("redis://").contains("rediss://").contains("redis-sentinel://")
                    .contains("zookeeper://");
        }
        Result run = baton("run", "--help");
        for (String status : List.of("64", "69", "70", "75", "76", "77", "126/127", "129/130/143")) {
            assertThat(run.out()).containsPattern("(?m)^  " + status + " ");
        }
    }

    @Test
    void checkIsASubcommandWithItsOwnHelp() {
        Result r = baton("help", "check");

        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("Usage: baton check").contains("--faults");
    }

    @Test
    void completionPrintsPicocliBashScriptForEveryCommand() {
        Result r = baton("completion");

        assertThat(r.status()).isZero();
        assertThat(r.out()).startsWith("#!/usr/bin/env bash").contains("complete -F")
                .contains("release").contains("purge").contains("status").contains("--older-than")
                .contains("--faults");
    }

    @Test
    void tildeInASqliteUrlIsTheHomeDirectory(@TempDir Path home) {
        assertThat(DatabaseUrl.parse("jdbc:sqlite:~/.baton/baton.db", "--url", home).jdbcUrl())
                .isEqualTo("jdbc:sqlite:" + home.resolve(".baton/baton.db"));
        assertThat(DatabaseUrl.parse("jdbc:sqlite:~/.baton/baton.db", "--url", home).isDefaultSqlite(home)).isTrue();
        assertThat(DatabaseUrl.resolve(null, java.util.Map.of("BATON_URL", "jdbc:sqlite:~/b.db"), home).jdbcUrl())
                .isEqualTo("jdbc:sqlite:" + home.resolve("b.db"));
        assertThat(DatabaseUrl.parse("jdbc:sqlite:/tmp/~/x.db", "--url", home).jdbcUrl())
                .isEqualTo("jdbc:sqlite:/tmp/~/x.db");
        assertThat(DatabaseUrl.parse("jdbc:postgresql://h/~db", "--url", home).jdbcUrl())
                .isEqualTo("jdbc:postgresql://h/~db");
    }

    @Test
    void tildeInTheCheckersSqliteUrlIsTheHomeDirectoryToo() {
        var cli = BatonCommand.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()));
        var parsed = cli.parseArgs("check", "--url", "jdbc:sqlite:~/check.db");

        List<String> urls = parsed.subcommand().matchedOption("--url").getValue();
        assertThat(urls).containsExactly("jdbc:sqlite:" + DatabaseOptions.home().resolve("check.db"));
    }

    @Test
    void sqliteUrlWithTildeWorksForEveryCommand(@TempDir Path home) throws Exception {
        DatabaseUrl url = DatabaseUrl.parse("jdbc:sqlite:~/locks.db", "--url", home);
        assertThat(url.sqliteFile()).contains(home.resolve("locks.db"));
        assertThat(url.describe()).isEqualTo("SQLite file " + home.resolve("locks.db"));
    }

    @Test
    void passwordsAreFoundInEveryFormAndRemovedFromAnyText() {
        assertThat(Secrets.hide("jdbc:postgresql://u:hunter2@h/db?password=hunter2&x=1"))
                .isEqualTo("jdbc:postgresql://u:***@h/db?password=***&x=1");
        assertThat(Secrets.hide("jdbc:mariadb://u:hun@ter2@h:3306/db"))
                .isEqualTo("jdbc:mariadb://u:***@h:3306/db");
        assertThat(Secrets.hide("cannot reach jdbc:postgresql://h/db?user=u&PassWord=hunter2 (unreachable): x"))
                .isEqualTo("cannot reach jdbc:postgresql://h/db?user=u&PassWord=*** (unreachable): x");
        assertThat(Secrets.hide("jdbc:postgresql://h/db?user=u;password=hunter2;ssl=true"))
                .isEqualTo("jdbc:postgresql://h/db?user=u;password=***;ssl=true");
        assertThat(Secrets.hide("jdbc:postgresql://h:5432/db?user=u")).isEqualTo("jdbc:postgresql://h:5432/db?user=u");
        DatabaseUrl url = DatabaseUrl.parse("jdbc:postgresql://h/db?password=hunter2&sslpassword=pw1", "--url");
        assertThat(url.scrub("FATAL: password hunter2 or pw1 rejected")).isEqualTo("FATAL: password *** or *** rejected");
        assertThat(url.toString()).doesNotContain("hunter2").doesNotContain("pw1");
    }

    @Test
    void passwordIsNotPrintedInTheVerboseStackTraceEither() {
        // MariaDB Connector/J repeats the user-info of an URL it cannot parse in its message
        Result r = baton("list", "--verbose", "--url", "jdbc:mariadb://u:hunter2@127.0.0.1:1/test");

        assertThat(r.status()).isNotZero();
        assertThat(r.err()).contains("\tat ").doesNotContain("hunter2");
    }

    @Test
    void passwordIsNotPrintedInAnUnknownOptionMessage() {
        Result r = baton("list", "--url", "jdbc:postgresql://127.0.0.1:1/x?password=hunter2", "stray");

        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).doesNotContain("hunter2");
    }

    /**
     * The warm-up's first look at a run's URL: the option in either form, never an argument of the command; without
     * the option, {@value DatabaseUrl#ENV}, else nothing (the embedded SQLite file).
     */
    @Test
    void theWarmUpReadsTheRunsUrlOptionOnly() {
        String pg = "jdbc:postgresql://127.0.0.1:5432/test";
        String redis = "redis://127.0.0.1:6379";
        Map<String, String> noEnv = Map.of();
        assertThat(BatonCommand.runUrl(new String[] {"run", "--lock", "x", "--url", pg, "--", "true"}, noEnv))
                .isEqualTo(pg);
        assertThat(BatonCommand.runUrl(new String[] {"run", "--url=" + pg, "--lock", "x", "--", "true"}, noEnv))
                .isEqualTo(pg);
        assertThat(BatonCommand.runUrl(new String[] {"run", "--lock", "x", "--", "echo", "--url", pg}, noEnv))
                .isNull();
        Map<String, String> env = Map.of(DatabaseUrl.ENV, redis);
        assertThat(BatonCommand.runUrl(new String[] {"run", "--lock", "x", "--", "echo", "--url", pg}, env))
                .isEqualTo(redis);
        assertThat(BatonCommand.runUrl(new String[] {"run", "--url", pg, "--lock", "x", "--", "true"}, env))
                .isEqualTo(pg);
        assertThat(BatonCommand.runUrl(new String[] {"run", "--lock", "x", "--", "true"},
                Map.of(DatabaseUrl.ENV, " "))).isNull();
    }

    /** Calendar data for SQLite (the default too) and PostgreSQL; nothing for Redis and ZooKeeper. */
    @Test
    void theWarmUpIsForTheSqlBackendsOnly() {
        assertThat(BatonCommand.WarmUp.forUrl(null)).isPresent();
        assertThat(BatonCommand.WarmUp.forUrl("jdbc:sqlite:/tmp/x.db")).isPresent();
        assertThat(BatonCommand.WarmUp.forUrl("jdbc:postgresql://h/db")).isPresent();
        assertThat(BatonCommand.WarmUp.forUrl("jdbc:mariadb://h/db")).isPresent();
        assertThat(BatonCommand.WarmUp.forUrl("redis://h")).isEmpty();
        assertThat(BatonCommand.WarmUp.forUrl("zookeeper://h:2181")).isEmpty();
        BatonCommand.WarmUp warmUp = BatonCommand.WarmUp.forUrl("jdbc:postgresql://h/db").orElseThrow();
        warmUp.run(); // completes: nothing it does can fail
        assertThat(warmUp.isDaemon()).isTrue();
    }
}
