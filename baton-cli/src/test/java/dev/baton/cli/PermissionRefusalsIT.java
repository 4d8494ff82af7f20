package dev.baton.cli;

import dev.baton.testkit.OwnServer;
import dev.baton.testkit.TestServers;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.baton.cli.BatonAdminIT.baton;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server that refuses (credentials, permission, a place that does not exist) exits 77 on every backend, with a
 * message that says what was refused: ZooKeeper's missing chroot and its ACLs ({@code NoAuth}), Redis's
 * {@code NOAUTH} on a server of its own with a password. (PostgreSQL's and MariaDB's refusals: {@link BatonAdminIT}.)
 */
class PermissionRefusalsIT {
    private static final String ZK = TestServers.ZOOKEEPER_HOST + ":" + TestServers.ZOOKEEPER_PORT;
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
    }

    private CuratorFramework zooKeeper() throws InterruptedException {
        TestServers.requireZooKeeper();
        CuratorFramework c = CuratorFrameworkFactory.newClient(ZK, new RetryOneTime(100));
        c.start();
        cleanup.add(c);
        assertThat(c.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)).as("connected to " + ZK).isTrue();
        return c;
    }

    /** A znode at the root that only {@code owner:pw} may change; {@code world} gets {@code worldPerms}. */
    private String protectedZnode(CuratorFramework c, int worldPerms) throws Exception {
        String path = "/baton-cli-acl-" + UUID.randomUUID().toString().substring(0, 8);
        List<ACL> acl = new ArrayList<>(List.of(new ACL(ZooDefs.Perms.ALL,
                new Id("digest", DigestAuthenticationProvider.generateDigest("owner:pw")))));
        if (worldPerms != 0) {
            acl.add(new ACL(worldPerms, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        }
        c.create().withACL(acl).forPath(path);
        cleanup.add(() -> c.delete().forPath(path)); // the root's ACL lets anyone delete it
        return path;
    }

    @Test
    void aMissingZooKeeperChrootIsNamedAndRefused() throws Exception {
        zooKeeper();
        String chroot = "/baton-cli-missing-" + UUID.randomUUID().toString().substring(0, 8);
        String url = "zookeeper://" + ZK + chroot;

        BatonAdminIT.Result run = baton("run", "--url", url, "--lock", "x", "--", "true");
        BatonAdminIT.Result list = baton("list", "--url", url);

        for (BatonAdminIT.Result r : List.of(run, list)) {
            assertThat(r.status()).as(r.err()).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.err()).contains("chroot " + chroot + " does not exist").contains("Baton does not create it");
        }
    }

    @Test
    void aZooKeeperAclThatRefusesThisClientIsAPermissionRefusal() throws Exception {
        CuratorFramework c = zooKeeper();
        String readOnly = protectedZnode(c, ZooDefs.Perms.READ);
        String closed = protectedZnode(c, 0);

        BatonAdminIT.Result run = baton("run", "--url", "zookeeper://" + ZK + readOnly, "--lock", "x", "--", "true");
        BatonAdminIT.Result list = baton("list", "--url", "zookeeper://" + ZK + closed);

        for (BatonAdminIT.Result r : List.of(run, list)) {
            assertThat(r.status()).as(r.err()).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.err()).contains("permission").contains("ACL");
        }
    }

    @Test
    void aRedisThatWantsAPasswordIsAPermissionRefusalForEveryCommand() {
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", "s3cret/x")) {
            for (List<String> args : List.of(
                    List.of("run", "--url", redis.url(), "--lock", "x", "--", "true"),
                    List.of("list", "--url", redis.url()),
                    List.of("status", "x", "--url", redis.url()),
                    List.of("release", "x", "--url", redis.url()))) {
                BatonAdminIT.Result r = baton(args.toArray(String[]::new));
                assertThat(r.status()).as(args + ": " + r.err()).isEqualTo(ExitCodes.REFUSED);
                assertThat(r.err()).contains("NOAUTH");
            }
        }
    }
}
