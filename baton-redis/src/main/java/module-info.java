/**
 * Baton's Redis locks on Lettuce: {@code RedisLocks} (builder) in {@code dev.baton.redis}, the one exported package.
 */
module dev.baton.redis {
    requires transitive dev.baton.core;
    requires transitive lettuce.core;
    requires io.netty.resolver;
    requires org.slf4j;

    exports dev.baton.redis;
}
