package dev.baton.testkit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * scripts/servers-untouched.sh, which CI runs around {@code mvn verify} to prove the suite leaves the servers a
 * developer already runs alone, on servers of this test's own: it passes when nothing touched them, and fails,
 * naming the server, after a restart and after a flush (its positive controls).
 */
class ServersUntouchedIT {
    private static final String SCRIPT = "scripts/servers-untouched.sh";

    @TempDir
    Path tmp;

    private record Result(int status, String output) {
    }

    private Result run(String command, Path file, String servers) throws Exception {
        Path out = tmp.resolve("out-" + System.nanoTime());
        ProcessBuilder pb = new ProcessBuilder("bash", OwnServer.repositoryRoot().resolve(SCRIPT).toString(), command,
                file.toString()).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("BATON_UNTOUCHED", servers);
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(SCRIPT + " " + command + " returned").isTrue();
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    @Test
    void passesWhenNothingTouchedTheServersAndFailsNamingARestartedOrFlushedOne() throws Exception {
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS);
             OwnServer postgres = OwnServer.start(OwnServer.Engine.POSTGRESQL)) {
            String servers = "redis:" + redis.port() + " postgresql:" + postgres.port();
            Path file = tmp.resolve("before");
            assertThat(run("record", file, servers).status()).isZero();
            Result untouched = run("verify", file, servers);
            assertThat(untouched.status()).as(untouched.output()).isZero();

            redis.restart();
            Result restarted = run("verify", file, servers);
            assertThat(restarted.status()).as("verify after a restart").isEqualTo(1);
            assertThat(restarted.output()).contains("redis on port " + redis.port() + " was restarted")
                    .doesNotContain("postgresql on port");

            assertThat(run("record", file, servers).status()).isZero();
            new ProcessBuilder("redis-cli", "-p", Integer.toString(redis.port()), "flushall")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(10, TimeUnit.SECONDS);
            Result flushed = run("verify", file, servers);
            assertThat(flushed.status()).as("verify after FLUSHALL").isEqualTo(1);
            assertThat(flushed.output()).contains("redis on port " + redis.port() + " lost its sentinel value");
        }
    }
}
