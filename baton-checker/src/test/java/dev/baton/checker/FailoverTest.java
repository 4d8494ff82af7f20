package dev.baton.checker;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FailoverTest {
    @Test
    void theDeploymentsOfTheHaScriptAreRecognised() {
        assertThat(Failover.of("zookeeper://127.0.0.1:2191,127.0.0.1:2192,127.0.0.1:2193").description())
                .contains("ZooKeeper leader");
        assertThat(Failover.of("redis-sentinel://127.0.0.1:26390,127.0.0.1:26391/0?requireReplicas=1#baton")
                .sentinel()).isTrue();
        assertThat(Failover.of("jdbc:postgresql://127.0.0.1:5442,127.0.0.1:5443/test?user=postgres"
                + "&targetServerType=primary").description()).contains("pg_ctl promote");
    }

    @Test
    void aUrlOfOneServerOrAnotherHostIsRefusedWithASentence() {
        assertThatThrownBy(() -> Failover.of("zookeeper://127.0.0.1:2181")).hasMessageContaining("names one server");
        assertThatThrownBy(() -> Failover.of("redis://127.0.0.1:6379")).hasMessageContaining("is not a ZooKeeper"
                + " ensemble");
        assertThatThrownBy(() -> Failover.of("redis-sentinel://127.0.0.1:26390")).hasMessageContaining("no master");
        assertThatThrownBy(() -> Failover.of("jdbc:postgresql://10.1.2.3:5432,127.0.0.1:5433/test"))
                .hasMessageContaining("not this host");
    }

    @Test
    void theRestartFaultRefusesAUrlOfSeveralServers() {
        assertThatThrownBy(() -> ServerRestart.of("jdbc:postgresql://127.0.0.1:5442,127.0.0.1:5443/test"))
                .hasMessageContaining("use --faults failover");
        assertThatThrownBy(() -> ServerRestart.of("zookeeper://127.0.0.1:2191,127.0.0.1:2192"))
                .hasMessageContaining("use --faults failover");
        assertThatThrownBy(() -> ServerRestart.of("redis-sentinel://127.0.0.1:26390#baton"))
                .hasMessageContaining("use --faults failover");
    }

    @Test
    void ensembleAndSentinelUrlsAreAcceptedByTheirStrategies() {
        new ZooKeeperStrategy().validate("zookeeper://127.0.0.1:2191,127.0.0.1:2192/chroot");
        assertThat(ZooKeeperStrategy.connectString("zookeeper://127.0.0.1:2191,127.0.0.1:2192/chroot"))
                .isEqualTo("127.0.0.1:2191,127.0.0.1:2192/chroot");
        new RedisStrategy().validate("redis-sentinel://127.0.0.1:26390,127.0.0.1:26391/0?requireReplicas=1#baton");
        assertThatThrownBy(() -> new RedisStrategy().validate("redis-sentinel://127.0.0.1:26390"))
                .hasMessageContaining("#master");
    }

    @Test
    void theRedisPasswordOfASentinelUrlGoesToRedisCliInItsEnvironmentNeverOnItsCommandLine() {
        Failover f = Failover.of("redis-sentinel://app:s3cr%40t@127.0.0.1:26390,127.0.0.1:26391/0#baton");
        InetSocketAddress node = new InetSocketAddress("127.0.0.1", 6390);
        assertThat(f.redisEnvironment()).isEqualTo(Map.of("REDISCLI_AUTH", "s3cr@t"));
        assertThat(f.redisCliCommand(node, "role")).containsSequence("--user", "app").doesNotContain("s3cr@t",
                "s3cr%40t").endsWith("role");
        Failover passwordOnly = Failover.of("redis-sentinel://s3cret@127.0.0.1:26390#baton");
        assertThat(passwordOnly.redisEnvironment()).isEqualTo(Map.of("REDISCLI_AUTH", "s3cret"));
        assertThat(passwordOnly.redisCliCommand(node, "role")).doesNotContain("--user", "s3cret");
        assertThat(Failover.of("redis-sentinel://127.0.0.1:26390#baton").redisEnvironment()).isEmpty();
        assertThat(f.description() + passwordOnly.description()).doesNotContain("s3cr");
    }

    @Test
    void thePostgresPasswordOfAUrlGoesToPgBasebackupInItsEnvironment() {
        Failover f = Failover.of("jdbc:postgresql://127.0.0.1:5442,127.0.0.1:5443/test?user=app&password=s3cr%26t"
                + "&targetServerType=primary");
        assertThat(f.postgresEnvironment()).isEqualTo(Map.of("PGPASSWORD", "s3cr&t"));
        assertThat(Failover.of("jdbc:postgresql://127.0.0.1:5442,127.0.0.1:5443/test?user=postgres")
                .postgresEnvironment()).isEmpty();
        assertThat(f.description()).doesNotContain("s3cr");
    }
}
