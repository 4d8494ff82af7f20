package dev.baton.bench;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.LockClient;

import java.util.concurrent.ConcurrentHashMap;

/** A Baton {@link LockClient} as a benchmark client: one lock handle per name, each acquisition a lease. */
final class BatonClient implements Subject.Client {
    private final LockClient client;
    private final ConcurrentHashMap<String, DistributedLock> locks = new ConcurrentHashMap<>();

    BatonClient(LockClient client) {
        this.client = client;
    }

    @Override
    public Subject.Held acquire(String lock) {
        Lease lease = locks.computeIfAbsent(lock, client::lock).acquire();
        return new Subject.Held() {
            @Override
            public void release() {
                lease.close();
            }

            @Override
            public boolean valid() {
                return lease.isValid();
            }
        };
    }

    @Override
    public void close() {
        client.close();
    }
}
