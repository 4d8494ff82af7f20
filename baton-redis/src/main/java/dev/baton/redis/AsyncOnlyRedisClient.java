package dev.baton.redis;

import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.protocol.PushHandler;
import io.lettuce.core.pubsub.PubSubEndpoint;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnectionImpl;
import io.lettuce.core.pubsub.api.sync.RedisPubSubCommands;
import io.lettuce.core.resource.ClientResources;

import java.time.Duration;

/**
 * The {@link RedisClient} that {@link RedisLocks} makes when it is given a URL: its connections have no synchronous
 * API ({@code sync()} returns null). Lettuce builds that API eagerly for every connection, as a dynamic proxy
 * over several hundred methods whose method table it fills by reflection — in a fresh JVM most of the time a
 * {@code baton run} on Redis spent before it could ask for the lock. {@link RedisLockBackend} sends every command
 * through the asynchronous API and waits as the synchronous one would ({@link Commands}).
 * These connections never leave the backend; a client the user gives {@link RedisLocks} is used as it is.
 */
final class AsyncOnlyRedisClient extends RedisClient {

    AsyncOnlyRedisClient(ClientResources resources, RedisURI uri) {
        super(resources, uri);
    }

    @Override
    protected <K, V> StatefulRedisConnectionImpl<K, V> newStatefulRedisConnection(RedisChannelWriter writer,
            PushHandler pushHandler, RedisCodec<K, V> codec, Duration timeout) {
        return new StatefulRedisConnectionImpl<>(writer, pushHandler, codec, timeout, getOptions().getJsonParser()) {
            @Override
            protected RedisCommands<K, V> newRedisSyncCommandsImpl() {
                return null;
            }
        };
    }

    @Override
    protected <K, V> StatefulRedisPubSubConnectionImpl<K, V> newStatefulRedisPubSubConnection(
            PubSubEndpoint<K, V> endpoint, RedisChannelWriter writer, RedisCodec<K, V> codec, Duration timeout) {
        return new StatefulRedisPubSubConnectionImpl<>(endpoint, writer, codec, timeout) {
            @Override
            protected RedisPubSubCommands<K, V> newRedisSyncCommandsImpl() {
                return null;
            }
        };
    }
}
