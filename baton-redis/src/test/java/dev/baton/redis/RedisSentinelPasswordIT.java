package dev.baton.redis;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.testkit.OwnSentinels;
import dev.baton.testkit.OwnServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Redis behind Sentinels that ask for a password of their own ({@code requirepass} in each Sentinel's config), apart
 * from the primary's: on a primary and three Sentinels of the test's own. The URL carries the primary's password as
 * its user-info and the Sentinels' as Baton's {@code sentinelPassword} parameter.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisSentinelPasswordIT {
    private static final String MASTER = "guarded";
    private static final String DATA_PASSWORD = "data-pw-4f1c";
    private static final String SENTINEL_PASSWORD = "sentinel-pw-9a7e";

    private OwnServer primary;
    private OwnSentinels sentinels;

    @BeforeEach
    void start() {
        primary = OwnServer.start(OwnServer.Engine.REDIS, "--requirepass", DATA_PASSWORD);
        sentinels = OwnSentinels.watch(MASTER, primary.port(), "--requirepass", SENTINEL_PASSWORD,
                "--sentinel", "auth-pass", MASTER, DATA_PASSWORD, "--sentinel", "sentinel-pass", SENTINEL_PASSWORD);
    }

    @AfterEach
    void stop() {
        if (sentinels != null) {
            sentinels.close();
        }
        if (primary != null) {
            primary.close();
        }
    }

    /** {@code redis-sentinel://DATA_PASSWORD@sentinels/0?sentinelPassword=…#guarded}, with {@code sentinelPassword}. */
    private String url(String sentinelPassword) {
        String query = sentinelPassword == null ? "" : "?sentinelPassword=" + sentinelPassword;
        return sentinels.url(query).replace("redis-sentinel://", "redis-sentinel://" + DATA_PASSWORD + "@");
    }

    @Test
    void aLockIsGrantedAndReleasedThroughPasswordProtectedSentinels() {
        String key = RedisKeys.Lock.of(RedisKeys.DEFAULT_PREFIX, "guarded-job").exclusive();
        try (LockClient a = RedisLocks.builder(url(SENTINEL_PASSWORD)).leaseTime(Duration.ofSeconds(30)).build();
             LockClient b = RedisLocks.builder(url(SENTINEL_PASSWORD)).leaseTime(Duration.ofSeconds(30)).build();
             RedisClient admin = RedisClient.create(RedisURI.builder().withHost(primary.host())
                     .withPort(primary.port()).withPassword(DATA_PASSWORD.toCharArray()).build());
             StatefulRedisConnection<String, String> onPrimary = admin.connect()) {
            try (Lease held = a.lock("guarded-job").acquire(Duration.ofSeconds(10))) {
                assertThat(onPrimary.sync().exists(key)).as("the grant, on the primary the Sentinels named").isOne();
                assertThat(b.lock("guarded-job").tryAcquire()).as("a second client while the first holds it").isEmpty();
                assertThat(held.isValid()).isTrue();
            }
            assertThat(onPrimary.sync().exists(key)).as("the grant after its release").isZero();
            try (Lease next = b.lock("guarded-job").tryAcquire().orElseThrow()) {
                assertThat(next.isValid()).isTrue();
            }
        }
    }

    @Test
    void aWrongSentinelPasswordIsAnAuthenticationFailureNamingTheSentinelsNeverThePassword() {
        String wrong = "not-the-sentinel-pw-77";
        LockBackendException e = catchThrowableOfType(LockBackendException.class,
                () -> RedisLocks.builder(url(wrong)).build().close());
        assertThat(e).as("build() with a wrong Sentinel password").isNotNull();
        assertThat(e.getMessage()).contains("Sentinel").contains("127.0.0.1:" + sentinels.ports().get(0))
                .contains("authentication failed").contains("sentinelPassword")
                .doesNotContain(wrong).doesNotContain(DATA_PASSWORD).doesNotContain(SENTINEL_PASSWORD);
        System.out.println("wrong Sentinel password: " + e.getMessage());
    }

    @Test
    void noSentinelPasswordForSentinelsThatAskForOneSaysSo() {
        LockBackendException e = catchThrowableOfType(LockBackendException.class,
                () -> RedisLocks.builder(url(null)).build().close());
        assertThat(e).as("build() without the Sentinels' password").isNotNull();
        assertThat(e.getMessage()).contains("Sentinel").contains("127.0.0.1:" + sentinels.ports().get(0))
                .contains("asks for a password").contains("sentinelPassword").doesNotContain(DATA_PASSWORD);
        System.out.println("no Sentinel password: " + e.getMessage());
    }
}
