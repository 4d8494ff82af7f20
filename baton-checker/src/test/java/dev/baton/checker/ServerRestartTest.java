package dev.baton.checker;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ServerRestartTest {

    /** Lettuce reads {@code redis://secret@host} as a password, and so must the restart fault's {@code redis-cli}. */
    @Test
    void theRedisPasswordOfEveryUserInfoFormReachesRedisCliInItsEnvironment() {
        assertThat(ServerRestart.of("redis://s3cret@127.0.0.1:6379").redisEnvironment())
                .isEqualTo(Map.of("REDISCLI_AUTH", "s3cret"));
        assertThat(ServerRestart.of("redis://:s3cr%40t@127.0.0.1:6379").redisEnvironment())
                .isEqualTo(Map.of("REDISCLI_AUTH", "s3cr@t"));
        ServerRestart withUser = ServerRestart.of("redis://app:s3cret@127.0.0.1:6379/2");
        assertThat(withUser.redisEnvironment()).isEqualTo(Map.of("REDISCLI_AUTH", "s3cret"));
        assertThat(withUser.redisCli("info", "server")).containsSequence("--user", "app")
                .doesNotContain("s3cret");
        assertThat(ServerRestart.of("redis://127.0.0.1:6379").redisEnvironment()).isEmpty();
        assertThat(withUser.description()).doesNotContain("s3cret");
    }
}
