package dev.baton.checker;

import dev.baton.testkit.TestServers;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The controller's view of Redis ({@link RedisStrategy}): a holder's connections are found by their client port and
 * killed with {@code CLIENT KILL ID}; the orphan count of check (d) sees only connections opened before the mark.
 */
class RedisCheckBackendIT {
    static final String URL = "redis://127.0.0.1:6379";

    @BeforeEach
    void redisIsUp() {
        TestServers.requireRedis();
    }

    /** A raw connection to Redis that has said PING, so the server lists it. */
    private static Socket connection() throws Exception {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(TestServers.REDIS_HOST, TestServers.REDIS_PORT), 2000);
        OutputStream out = s.getOutputStream();
        out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        byte[] reply = new byte[7];
        assertThat(in.readNBytes(reply, 0, 7)).isEqualTo(7);
        assertThat(new String(reply, StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
        return s;
    }

    @Test
    void aConnectionOpenedAfterTheMarkIsNotAStoppedWorkersEvenFromOneOfItsPorts() throws Exception {
        try (CheckBackend backend = new RedisStrategy().open(URL, "baton_check_orphans_it", Duration.ofSeconds(2));
             Socket before = connection()) {
            long mark = backend.sessionMark();
            try (Socket after = connection()) {
                Set<Integer> ports = Set.of(before.getLocalPort(), after.getLocalPort());
                assertThat(backend.countSessions(ports, mark)).as("connections from those ports opened before the mark")
                        .isEqualTo(1);
                assertThat(backend.countSessions(ports, Long.MAX_VALUE)).as("all connections from those ports")
                        .isEqualTo(2);
            }
        }
    }

    /**
     * Seen in the standard profile (Redis × restart, seed 2662): "(d) 1 server session(s) of stopped workers remain".
     * After the restart fault, connection ids start again below the mark taken at the scenario's start, and the
     * controller's reconnected connections can come from a port a worker's proxy used before the restart.
     */
    @Test
    void theControllersOwnConnectionsAreNeverAStoppedWorkersWhateverTheirIdsAndPorts() throws Exception {
        io.lettuce.core.RedisClient lister = io.lettuce.core.RedisClient.create(URL);
        try (CheckBackend backend = new RedisStrategy().open(URL, "baton_check_own_it", Duration.ofSeconds(2));
             var c = lister.connect()) {
            backend.client().lock("touch").tryAcquire().ifPresent(dev.baton.Lease::close); // its connections are up
            Set<Integer> own = controllerPorts(c.sync().clientList());
            assertThat(own).as("the controller's lock client connections, and its admin connection")
                    .hasSizeGreaterThanOrEqualTo(2);
            assertThat(backend.countSessions(own, Long.MAX_VALUE)).isZero();
            // as after a restart fault: every connection of the controller is cut and comes back, still its own
            for (int port : own) {
                c.sync().clientKill(io.lettuce.core.KillArgs.Builder.addr("127.0.0.1:" + port));
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
                backend.client().lock("touch").tryAcquire().ifPresent(dev.baton.Lease::close);
                backend.countSessions(Set.of(), Long.MAX_VALUE); // the admin connection's next command
                return controllerPorts(c.sync().clientList()).size() >= 2;
            });
            assertThat(backend.countSessions(controllerPorts(c.sync().clientList()), Long.MAX_VALUE)).isZero();
        } finally {
            lister.shutdown();
        }
    }

    /** The client ports of the connections named as the controller's, from {@code CLIENT LIST}. */
    private static Set<Integer> controllerPorts(String clientList) {
        Set<Integer> out = new java.util.HashSet<>();
        for (String line : clientList.split("\\n")) {
            if (line.contains(" name=" + RedisStrategy.CONTROLLER_NAME + " ")
                    || line.contains(" name=baton:" + RedisStrategy.CONTROLLER_PREFIX + "/")) {
                String addr = line.replaceAll(".*\\baddr=(\\S+).*", "$1");
                out.add(Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1)));
            }
        }
        return out;
    }

    @Test
    void killSessionsEndsExactlyTheConnectionsFromThosePorts() throws Exception {
        try (CheckBackend backend = new RedisStrategy().open(URL, "baton_check_kill_it", Duration.ofSeconds(2));
             Socket victim = connection(); Socket bystander = connection()) {
            assertThat(backend.killSessions(Set.of(victim.getLocalPort()))).isEqualTo(1);
            assertThat(victim.getInputStream().read()).as("the server closed the killed connection").isEqualTo(-1);
            assertThat(backend.countSessions(Set.of(victim.getLocalPort(), bystander.getLocalPort()), Long.MAX_VALUE))
                    .as("the bystander's connection is alive").isEqualTo(1);
        }
    }

    @Test
    void theUrlThroughAProxyKeepsCredentialsAndDatabase() {
        try (CheckBackend backend = new RedisStrategy().open(URL + "/0", "baton_check_url_it", Duration.ofSeconds(2))) {
            assertThat(backend.urlThroughProxy(40001)).isEqualTo("redis://127.0.0.1:40001/0");
            assertThat(backend.serverAddress()).contains(new InetSocketAddress("127.0.0.1", 6379));
        }
    }
}
