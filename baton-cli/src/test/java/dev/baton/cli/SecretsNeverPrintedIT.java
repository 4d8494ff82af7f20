package dev.baton.cli;

import dev.baton.testkit.OwnServer;
import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A secret written in a URL is never printed, whatever the backend and whatever failed: real connections that fail
 * (unreachable, wrong password, unknown user) with secrets in every form the backends take, checked on standard
 * output, standard error, the verbose log and stack trace of a separate {@code baton} process, and the text and JSON
 * reports of {@code baton check}. Redis runs as a server of its own with a password that contains a {@code /}.
 */
class SecretsNeverPrintedIT {
    /** The own Redis's password: Lettuce's URL takes it percent-encoded ({@code %2F}). */
    private static final String PASSWORD = "s3cretRedis/x";
    private static final String PASSWORD_IN_URL = "s3cretRedis%2Fx";
    private static OwnServer redis;

    @TempDir
    Path dir;

    @BeforeAll
    static void startRedis() {
        redis = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", PASSWORD);
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    private static String redis(String userInfo) {
        return "redis://" + userInfo + "@" + redis.host() + ":" + redis.port();
    }

    private static void assertNoSecret(String text, String... secrets) {
        for (String s : secrets) {
            assertThat(text).as("printed text").doesNotContain(s);
        }
    }

    @Test
    void redisPasswordOnlyFormWithASlashAuthenticatesAndItsWrongPasswordIsNeverPrinted() {
        BatonAdminIT.Result ok = baton("run", "--url", redis(PASSWORD_IN_URL), "--lock", "secrets-" + UUID.randomUUID(),
                "--", "true");
        assertThat(ok.status()).as(ok.err()).isZero();

        BatonAdminIT.Result wrong = baton("list", "--url", redis("wr0ngRedisPw"));
        assertThat(wrong.status()).as(wrong.err()).isEqualTo(ExitCodes.REFUSED);
        assertThat(wrong.err()).contains("redis://***@");
        assertNoSecret(wrong.out() + wrong.err(), "wr0ngRedisPw");

        BatonAdminIT.Result wrongWithUser = baton("list", "--url", redis("default:wr0ng%2FRedisPw"));
        assertThat(wrongWithUser.status()).as(wrongWithUser.err()).isEqualTo(ExitCodes.REFUSED);
        assertNoSecret(wrongWithUser.out() + wrongWithUser.err(), "wr0ng", "RedisPw");
    }

    @Test
    void anUnreachableServerNeverPrintsTheSecretOfItsUrl() {
        TestServers.require("PostgreSQL", "127.0.0.1", 5432);
        for (String url : List.of(
                "redis://" + PASSWORD_IN_URL + "@127.0.0.1:1",
                "redis://:" + PASSWORD_IN_URL + "@127.0.0.1:1",
                "rediss://default:" + PASSWORD_IN_URL + "@127.0.0.1:1",
                "jdbc:postgresql://127.0.0.1:1/test?user=postgres&password=" + PASSWORD_IN_URL + "&sslpassword=k3ySsl/z",
                "jdbc:mariadb://127.0.0.1:1/test?user=root&password=" + PASSWORD_IN_URL + "&trustStorePassword=k3ySsl/z")) {
            BatonAdminIT.Result r = baton("list", "--verbose", "--url", url);
            assertThat(r.status()).as(url + ": " + r.err()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertNoSecret(r.out() + r.err(), "s3cretRedis", "k3ySsl");
        }
    }

    @Test
    void aRefusedSqlLoginNeverPrintsItsPasswords() {
        TestServers.require("MariaDB", "127.0.0.1", 3306);
        BatonAdminIT.Result r = baton("list", "--verbose", "--url", "jdbc:mariadb://127.0.0.1:3306/test?user=no_such_user_x"
                + "&password=s3cretMaria&trustStorePassword=k3yStore/z&keyStorePassword=k3yStore2");
        assertThat(r.status()).as(r.err()).isEqualTo(ExitCodes.REFUSED);
        assertNoSecret(r.out() + r.err(), "s3cretMaria", "k3yStore");
    }

    @Test
    void theVerboseLogOfASeparateBatonProcessNeverPrintsTheSecret() throws Exception {
        TestServers.requireZooKeeper();
        for (String url : List.of(redis("wr0ngRedisPw"), "redis://:" + PASSWORD_IN_URL + "@127.0.0.1:1",
                "zookeeper://digest:s3cretZk@127.0.0.1:2181/app",
                "jdbc:postgresql://127.0.0.1:5432/test?user=no_such_role_x&password=s3cretPg&sslpassword=k3ySsl")) {
            String printed = process("list", "--verbose", "--url", url);
            assertNoSecret(printed, "wr0ngRedisPw", "s3cretRedis", "s3cretZk", "s3cretPg", "k3ySsl");
        }
    }

    @Test
    void batonCheckReportsNeverPrintTheSecretInTextOrJson() throws Exception {
        Path json = dir.resolve("report.json");
        BatonAdminIT.Result r = baton("check", "--url", redis(PASSWORD_IN_URL), "--profile", "quick", "--duration", "2s",
                "--faults", "none", "--workers", "2", "--work-dir", dir.resolve("work").toString(),
                "--json", json.toString());

        assertThat(r.status()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("command: baton check --url redis://***@");
        assertNoSecret(r.out() + r.err(), "s3cretRedis");
        assertNoSecret(Files.readString(json, StandardCharsets.UTF_8), "s3cretRedis");

        BatonAdminIT.Result down = baton("check", "--url", "redis://" + PASSWORD_IN_URL + "@127.0.0.1:1", "--profile",
                "quick", "--duration", "1s", "--faults", "none", "--workers", "2", "--work-dir",
                dir.resolve("work2").toString());
        assertThat(down.status()).as("unreachable, not a bug in baton: " + down.err()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertNoSecret(down.out() + down.err(), "s3cretRedis");
    }

    /** Runs {@code baton} as a process of its own; returns what it printed on standard output and error. */
    private String process(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), BatonCommand.class.getName()));
        cmd.addAll(List.of(args));
        Path out = dir.resolve("out-" + UUID.randomUUID());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().remove("BATON_URL");
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("baton " + String.join(" ", args) + " ended").isTrue();
        String printed = Files.readString(out, StandardCharsets.UTF_8);
        assertThat(printed).as("a verbose run logs").isNotBlank();
        return printed;
    }
}
