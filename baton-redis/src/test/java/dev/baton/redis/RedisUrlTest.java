package dev.baton.redis;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisUrlTest {
    @Test
    void batonsParametersAreTakenOutOfASentinelUrlAndItsMasterIsKept() {
        RedisUrl u = RedisUrl.parse("redis-sentinel://127.0.0.1:26390,127.0.0.1:26391/0?requireReplicas=1"
                + "&timeout=3s&replicaTimeout=500ms#baton");
        assertThat(u.lettuceUrl()).isEqualTo("redis-sentinel://127.0.0.1:26390,127.0.0.1:26391/0?timeout=3s#baton");
        assertThat(u.replicas()).isEqualTo(1);
        assertThat(u.replicaTimeout()).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void aUrlWithoutParametersIsLeftAsItIs() {
        assertThat(RedisUrl.parse("redis://h:1/2").lettuceUrl()).isEqualTo("redis://h:1/2");
        assertThat(RedisUrl.parse("redis://h:1/2?requireReplicas=2").lettuceUrl()).isEqualTo("redis://h:1/2");
        assertThat(RedisUrl.parse("redis://h:1/2?requireReplicas=2").replicas()).isEqualTo(2);
    }

    @Test
    void aBadReplicaSettingIsRefusedNamingIt() {
        assertThatThrownBy(() -> RedisUrl.parse("redis://h?requireReplicas=one"))
                .hasMessageContaining("requireReplicas").hasMessageContaining("'one'");
        assertThatThrownBy(() -> RedisUrl.parse("redis://h?replicaTimeout=5"))
                .hasMessageContaining("replicaTimeout").hasMessageContaining("'5'");
        assertThatThrownBy(() -> RedisLocks.builder("redis://h?requireReplicas=17"))
                .hasMessageContaining("replicas must be between 0 and 16, was 17");
    }

    /** The JDK's resolver only where no lookup is needed: it would block an event loop while it looked a name up. */
    @Test
    void onlyHostsGivenAsAddressesSkipNettysDnsClient() {
        assertThat(RedisLocks.Builder.onlyAddresses(io.lettuce.core.RedisURI.create("redis://127.0.0.1:6379"))).isTrue();
        assertThat(RedisLocks.Builder.onlyAddresses(io.lettuce.core.RedisURI.create("redis://[::1]:6379"))).isTrue();
        assertThat(RedisLocks.Builder.onlyAddresses(io.lettuce.core.RedisURI.create(
                "redis-sentinel://127.0.0.1:26390,127.0.0.1:26391#m"))).isTrue();
        assertThat(RedisLocks.Builder.onlyAddresses(io.lettuce.core.RedisURI.create("redis://localhost:6379"))).isFalse();
        assertThat(RedisLocks.Builder.onlyAddresses(io.lettuce.core.RedisURI.create("redis://redis.example:6379")))
                .isFalse();
        assertThat(RedisLocks.Builder.onlyAddresses(io.lettuce.core.RedisURI.create(
                "redis-sentinel://127.0.0.1:26390,sentinel.example:26391#m"))).isFalse();
    }
}
