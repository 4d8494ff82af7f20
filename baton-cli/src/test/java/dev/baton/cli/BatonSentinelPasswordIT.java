package dev.baton.cli;

import dev.baton.testkit.OwnSentinels;
import dev.baton.testkit.OwnServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton run} through Redis Sentinels that ask for a password of their own (servers of the test's own): the
 * URL's {@code sentinelPassword} lets it in; a wrong one is refused (77) naming the Sentinel, never a password.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BatonSentinelPasswordIT {
    private static final String DATA_PASSWORD = "data-pw-c3d1";
    private static final String SENTINEL_PASSWORD = "sentinel-pw-5be0";

    @Test
    void batonRunGoesThroughPasswordProtectedSentinelsAndAWrongPasswordIsRefused() {
        try (OwnServer primary = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", DATA_PASSWORD);
             OwnSentinels sentinels = OwnSentinels.watch("cliguard", primary.port(), "--requirepass",
                     SENTINEL_PASSWORD, "--sentinel", "auth-pass", "cliguard", DATA_PASSWORD,
                     "--sentinel", "sentinel-pass", SENTINEL_PASSWORD)) {
            String url = sentinels.url("?sentinelPassword=" + SENTINEL_PASSWORD)
                    .replace("redis-sentinel://", "redis-sentinel://" + DATA_PASSWORD + "@");
            BatonAdminIT.Result ok = baton("run", "--url", url, "--lock", "cli-job", "--", "true");
            assertThat(ok.status()).as("baton run through the Sentinels; stderr: %s", ok.err()).isZero();

            String wrong = "wrong-sentinel-pw-81";
            BatonAdminIT.Result refused = baton("run", "--url", url.replace(SENTINEL_PASSWORD, wrong), "--lock",
                    "cli-job", "--", "true");
            assertThat(refused.status()).as("stderr: %s", refused.err()).isEqualTo(ExitCodes.REFUSED);
            assertThat(refused.err()).contains("Sentinel").contains("127.0.0.1:" + sentinels.ports().get(0))
                    .contains("authentication failed")
                    .doesNotContain(wrong).doesNotContain(DATA_PASSWORD).doesNotContain(SENTINEL_PASSWORD);
            System.out.println("wrong Sentinel password under baton run: " + refused.err().strip());
        }
    }
}
