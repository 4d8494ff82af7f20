package dev.baton.spi;

import dev.baton.DistributedLock;
import dev.baton.DistributedReadWriteLock;
import dev.baton.LockClient;
import dev.baton.LockInfo;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A {@link LockClient} that passes every call to the core client it wraps: the base of a backend's own client type
 * that adds operations of its own (an operator's force release, say) to the one API.
 */
public abstract class DelegatingLockClient implements LockClient {
    private final LockClient core;

    /** @param core the client that does the work, usually {@link LockClients#create}'s */
    protected DelegatingLockClient(LockClient core) {
        this.core = Objects.requireNonNull(core, "core");
    }

    @Override
    public DistributedLock lock(String name) {
        return core.lock(name);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return core.readWriteLock(name);
    }

    @Override
    public <T> T withLock(String name, Duration maxWait, Supplier<T> task) {
        return core.withLock(name, maxWait, task);
    }

    @Override
    public void withLock(String name, Duration maxWait, Runnable task) {
        core.withLock(name, maxWait, task);
    }

    @Override
    public List<LockInfo> list() {
        return core.list();
    }

    @Override
    public String clientId() {
        return core.clientId();
    }

    @Override
    public String backend() {
        return core.backend();
    }

    @Override
    public void close() {
        core.close();
    }

    @Override
    public String toString() {
        return core.toString();
    }
}
