package dev.baton.cli;

import dev.baton.testkit.HaServers;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton run|status|list} on each deployment of {@code scripts/start-servers.sh --ha} (a ZooKeeper ensemble,
 * Redis behind Sentinel with {@code requireReplicas=1}, PostgreSQL primary + standby with a multi-host URL), through
 * the URL the script prints. The deployments are left running for reuse; nothing here fails a node over.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class BatonHaIT {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {HaServers.ZOOKEEPER, HaServers.REDIS_SENTINEL, HaServers.POSTGRESQL_STANDBY})
    void runTakesAndReleasesALockThroughTheUrlTheHaScriptPrints(String deployment, @TempDir Path dir) throws Exception {
        String url = HaServers.url(deployment);
        String name = "cli-ha-" + UUID.randomUUID().toString().substring(0, 8);
        Path seen = dir.resolve("seen");
        BatonAdminIT.Result first = baton("run", "--url", url, "--lock", name, "--", "sh", "-c",
                "echo \"$BATON_FENCING_TOKEN\" > " + seen);
        assertThat(first.status()).as(url + ": " + first.err()).isZero();
        long token = Long.parseLong(Files.readString(seen).strip());
        BatonAdminIT.Result second = baton("run", "--url", url, "--lock", name, "--", "sh", "-c",
                "echo \"$BATON_FENCING_TOKEN\" > " + seen);
        assertThat(second.status()).as(url + ": " + second.err()).isZero();
        assertThat(Long.parseLong(Files.readString(seen).strip())).as("the next grant's token").isGreaterThan(token);
        BatonAdminIT.Result status = baton("status", "--url", url, name);
        assertThat(status.err()).as(url).doesNotContain("Exception");
        assertThat(status.out() + status.err()).as("released at the end").doesNotContain("held by");
        BatonAdminIT.Result list = baton("list", "--url", url);
        assertThat(list.status()).as(url + ": " + list.err()).isZero();
    }
}
