package dev.baton.redis;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.async.RedisAsyncCommands;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The few commands sent outside scripts, each waited for as Lettuce's synchronous API waits: at most the
 * command timeout, then cancelled ({@link io.lettuce.core.RedisCommandTimeoutException}); an interrupt ends
 * the wait ({@link io.lettuce.core.RedisCommandInterruptedException}, the flag set again); a server error is
 * thrown as it came. Through the asynchronous API because the synchronous one is slow to build
 * ({@link AsyncOnlyRedisClient}).
 */
final class Commands {
    private final RedisAsyncCommands<String, String> async;
    private final Duration timeout;

    Commands(RedisAsyncCommands<String, String> async, Duration timeout) {
        this.async = async;
        this.timeout = timeout;
    }

    static <T> T await(RedisFuture<T> future, Duration timeout) {
        return LettuceFutures.awaitOrCancel(future, timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    String clientSetname(String name) {
        return await(async.clientSetname(name), timeout);
    }

    String info(String section) {
        return await(async.info(section), timeout);
    }

    String get(String key) {
        return await(async.get(key), timeout);
    }

    Long pttl(String key) {
        return await(async.pttl(key), timeout);
    }

    Double zscore(String key, String member) {
        return await(async.zscore(key, member), timeout);
    }

    List<String> time() {
        return await(async.time(), timeout);
    }

    KeyScanCursor<String> scan(ScanCursor cursor, ScanArgs args) {
        return await(async.scan(cursor, args), timeout);
    }
}
