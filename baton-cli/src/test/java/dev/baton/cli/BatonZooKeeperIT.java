package dev.baton.cli;

import dev.baton.Lease;
import dev.baton.LockLostException;
import dev.baton.testkit.TestServers;
import dev.baton.zookeeper.ZooKeeperLockClient;
import dev.baton.zookeeper.ZooKeeperLocks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton run|list|status|release --url zookeeper://…} against the ZooKeeper that {@code scripts/start-servers.sh}
 * starts, in process, while a lock client of the library holds locks under the same (default) root.
 */
class BatonZooKeeperIT {
    static final String URL = "zookeeper://" + TestServers.ZOOKEEPER_HOST + ":" + TestServers.ZOOKEEPER_PORT;
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @BeforeEach
    void zooKeeperIsUp() {
        TestServers.requireZooKeeper();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : cleanup) {
            c.close();
        }
    }

    private ZooKeeperLockClient client() {
        ZooKeeperLockClient c = ZooKeeperLocks.builder(TestServers.ZOOKEEPER_HOST + ":" + TestServers.ZOOKEEPER_PORT)
                .build();
        cleanup.add(c);
        return c;
    }

    private static String lock(String what) {
        return "cli-zk-" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void runHoldsTheLockWhileTheCommandRunsAndGivesItsTokenToTheCommand(@TempDir Path dir) throws Exception {
        String name = lock("run");
        Path seen = dir.resolve("seen");
        BatonAdminIT.Result r = baton("run", "--url", URL, "--lock", name, "--", "sh", "-c",
                "echo \"$BATON_LOCK $BATON_FENCING_TOKEN\" > " + seen);
        assertThat(r.status()).as(r.err()).isZero();
        String[] lockAndToken = Files.readString(seen).strip().split(" ");
        assertThat(lockAndToken[0]).isEqualTo(name);
        long token = Long.parseLong(lockAndToken[1]);
        try (Lease next = client().lock(name).tryAcquire().orElseThrow()) {
            assertThat(next.fencingToken()).as("released at the end, next token higher").isGreaterThan(token);
            BatonAdminIT.Result busy = baton("run", "--url", URL, "--lock", name, "--wait", "0", "--", "true");
            assertThat(busy.status()).isEqualTo(ExitCodes.NOT_ACQUIRED);
        }
    }

    @Test
    void listStatusAndReleaseUnderTheHoldersTokenOnly() throws Exception {
        String name = lock("release");
        Lease held = client().lock(name).tryAcquire().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        held.onLost(lost::complete);

        BatonAdminIT.Result list = baton("list", "--url", URL);
        assertThat(list.status()).as(list.err()).isZero();
        assertThat(list.out()).contains(name).contains(held.holderId()).contains(Long.toString(held.fencingToken()));
        BatonAdminIT.Result status = baton("status", name, "--url", URL);
        assertThat(status.status()).as(status.err()).isZero();
        assertThat(status.out()).contains(held.holderId()).contains("session lock");

        BatonAdminIT.Result wrong = baton("release", name, "--url", URL, "--token", Long.toString(held.fencingToken() + 1));
        assertThat(wrong.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(wrong.err()).contains("held under token " + held.fencingToken());
        assertThat(held.isValid()).isTrue();

        BatonAdminIT.Result r = baton("release", name, "--url", URL, "--token", Long.toString(held.fencingToken()));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("released lock '" + name + "': holder " + held.holderId() + ", token "
                + held.fencingToken()).contains("member node deleted");
        assertThat(lost.get(10, TimeUnit.SECONDS).getMessage()).contains(name);
        held.close();
        BatonAdminIT.Result none = baton("release", name, "--url", URL);
        assertThat(none.status()).isEqualTo(ExitCodes.NOT_HELD);
        assertThat(none.err()).contains("is free: nothing released");
        assertThat(baton("status", name, "--url", URL).status()).isEqualTo(ExitCodes.NOT_HELD);
    }

    @Test
    void whatZooKeeperHasNoneOfIsAUsageErrorAndAnUnreachableServerIs69() {
        BatonAdminIT.Result table = baton("run", "--url", URL, "--table", "t", "--lock", "x", "--", "true");
        assertThat(table.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(table.err()).contains("--table").contains(ZooKeeperLocks.DEFAULT_ROOT_PATH);
        BatonAdminIT.Result session = baton("run", "--url", URL, "--strategy", "session", "--lock", "x", "--", "true");
        assertThat(session.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(session.err()).contains("held by its ZooKeeper session already");
        BatonAdminIT.Result purge = baton("purge", "--url", URL, "--older-than", "1h");
        assertThat(purge.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(purge.err()).contains("nothing to purge").contains("ends with its holder's session");
        BatonAdminIT.Result down = baton("list", "--url", "zookeeper://127.0.0.1:1");
        assertThat(down.status()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(down.err()).contains("cannot reach zookeeper://127.0.0.1:1");
    }
}
