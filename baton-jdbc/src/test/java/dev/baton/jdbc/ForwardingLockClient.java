package dev.baton.jdbc;

import dev.baton.DistributedLock;
import dev.baton.LockClient;
import dev.baton.LockInfo;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/** A {@link LockClient} that forwards every call, for test fixtures that add behaviour to close(). */
class ForwardingLockClient implements LockClient {
    private final LockClient delegate;

    ForwardingLockClient(LockClient delegate) {
        this.delegate = delegate;
    }

    LockClient delegate() {
        return delegate;
    }

    @Override
    public DistributedLock lock(String name) {
        return delegate.lock(name);
    }

    @Override
    public dev.baton.DistributedReadWriteLock readWriteLock(String name) {
        return delegate.readWriteLock(name);
    }

    @Override
    public <T> T withLock(String name, Duration maxWait, Supplier<T> task) {
        return delegate.withLock(name, maxWait, task);
    }

    @Override
    public void withLock(String name, Duration maxWait, Runnable task) {
        delegate.withLock(name, maxWait, task);
    }

    @Override
    public List<LockInfo> list() {
        return delegate.list();
    }

    @Override
    public String clientId() {
        return delegate.clientId();
    }

    @Override
    public String backend() {
        return delegate.backend();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
