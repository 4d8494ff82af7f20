package dev.baton.bench;

import dev.baton.redis.RedisLocks;
import io.lettuce.core.RedisURI;

import java.time.Duration;

/** Baton's Redis backend ({@code baton-redis}), over a RedisClient of its own per bench client. */
final class BatonRedisSubject implements Subject {

    @Override
    public String id() {
        return "baton-redis";
    }

    @Override
    public Kind kind() {
        return Kind.BATON;
    }

    @Override
    public String server() {
        return "redis";
    }

    @Override
    public String library() {
        return "Baton " + Subject.versionOf("dev.baton", "baton-redis");
    }

    @Override
    public String waits() {
        return "pub/sub release message (one PSUBSCRIBE per client); else at the holder's PTTL or backoff 10-500 ms;"
                + " fair line per lock";
    }

    @Override
    public String baseline() {
        return "raw-setnx-redis";
    }

    @Override
    public boolean manyLocks() {
        return true;
    }

    @Override
    public Client open(String name, Duration leaseTime) {
        RedisLocks.Builder b = RedisLocks.builder(RedisURI.create(Servers.REDIS_URI)).keyPrefix("bench:baton:")
                .clientIdPrefix(name);
        if (leaseTime != null) {
            b.leaseTime(leaseTime);
        }
        return new BatonClient(b.build());
    }
}
