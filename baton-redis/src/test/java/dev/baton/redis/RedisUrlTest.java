package dev.baton.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

    @Test
    void theSentinelsPasswordIsTakenOutDecodedAndNeverShown() {
        RedisUrl u = RedisUrl.parse("redis-sentinel://data@127.0.0.1:26390,127.0.0.1:26391/0?sentinelPassword=s%2Fp%40ss+1"
                + "&requireReplicas=1#baton");
        assertThat(u.lettuceUrl()).isEqualTo("redis-sentinel://data@127.0.0.1:26390,127.0.0.1:26391/0#baton");
        assertThat(u.sentinelPassword()).isEqualTo("s/p@ss+1");
        assertThat(u.toString()).doesNotContain("s/p@ss").doesNotContain("s%2Fp").doesNotContain("data@");
        assertThat(RedisUrl.parse("redis-sentinel://127.0.0.1:26390/0#baton").sentinelPassword()).isNull();
    }

    @Test
    void eachSentinelOfTheUrlGetsTheSentinelsPasswordAndThePrimaryKeepsItsOwn() {
        io.lettuce.core.RedisURI uri = RedisUrl.parse("redis-sentinel://data@127.0.0.1:26390,127.0.0.1:26391/0"
                + "?sentinelPassword=guard#baton").redisUri();
        assertThat(new String(uri.getCredentialsProvider().resolveCredentials().block().getPassword()))
                .isEqualTo("data");
        assertThat(uri.getSentinels()).hasSize(2).allSatisfy(sentinel -> assertThat(new String(
                sentinel.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("guard"));
    }

    /** Every mistake in a Sentinel URL (and in Baton's parameters) is refused with a sentence naming it. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "redis-sentinel://127.0.0.1:26379/0                         | names the primary its Sentinels watch after '#'",
            "redis-sentinel://127.0.0.1:26379/0#                        | names the primary its Sentinels watch after '#'",
            "redis-sentinel://127.0.0.1:26379/0?requireReplicas=1       | names the primary its Sentinels watch after '#'",
            "redis-sentinel:///0#m                                      | names at least one Sentinel",
            "redis-sentinel://#m                                        | names at least one Sentinel",
            "redis-sentinel://pw@/0#m                                   | names at least one Sentinel",
            "redis-sentinel://127.0.0.1:26379,/0#m                      | an empty Sentinel address in '127.0.0.1:26379,'",
            "redis-sentinel://127.0.0.1:26379,,127.0.0.1:26380/0#m      | an empty Sentinel address",
            "redis-sentinel://:26379/0#m                                | an empty Sentinel address",
            "redis-sentinel://127.0.0.1:26379/x#m                       | database 'x' is not a number",
            "redis-sentinel://127.0.0.1:26379/0?requireReplicas=one#m   | requireReplicas: a number of replicas (0 to 16), was 'one'",
            "redis-sentinel://127.0.0.1:26379/0?requireReplicas=-1#m    | requireReplicas: a number of replicas (0 to 16), was '-1'",
            "redis-sentinel://127.0.0.1:26379/0?requireReplicas=#m      | requireReplicas: a number of replicas (0 to 16), was ''",
            "redis-sentinel://127.0.0.1:26379/0?requireReplicas=17#m    | replicas must be between 0 and 16, was 17",
            "redis-sentinel://127.0.0.1:26379/0?replicaTimeout=1m#m     | replicaTimeout: <n>ms or <n>s, was '1m'",
            "redis-sentinel://127.0.0.1:26379/0?sentinelPassword=#m     | sentinelPassword: empty",
            "redis-sentinel://127.0.0.1:26379/0?sentinelPassword=%zz#m  | sentinelPassword: a '%' not followed by two hex digits",
            "redis://127.0.0.1:6379?sentinelPassword=guard              | sentinelPassword: the password of Redis Sentinels, for a redis-sentinel:// URL only",
    })
    void aBadSentinelUrlIsRefusedNamingWhatIsWrong(String url, String message) {
        assertThatThrownBy(() -> RedisLocks.builder(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message).message().doesNotContain("zz").doesNotContain("guard");
    }

    @Test
    void aSentinelUrlNamingItsPrimaryByParameterIsAccepted() {
        assertThat(RedisUrl.parse("redis-sentinel://127.0.0.1:26379/0?sentinelMasterId=m").redisUri()
                .getSentinelMasterId()).isEqualTo("m");
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
