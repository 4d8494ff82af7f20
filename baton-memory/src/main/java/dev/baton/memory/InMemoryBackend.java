package dev.baton.memory;

import dev.baton.LockInfo;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.WaitingQueue;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * One client's connection to an {@link InMemoryLockServer}: every operation is one call to the server, which
 * decides it atomically. Declares every capability the server has: a {@link WaitingQueue} (a FIFO line per lock),
 * {@link NotifiesReleases} (the server broadcasts releases), {@link ReadWriteModes} and {@link ConfirmsGrants}.
 */
final class InMemoryBackend implements WaitingQueue, NotifiesReleases, ReadWriteModes, ConfirmsGrants {
    private final InMemoryLockServer server;
    private volatile ReleaseListener listener;
    private volatile InMemoryLockServer.Link link;

    InMemoryBackend(InMemoryLockServer server) {
        this.server = server;
    }

    @Override
    public String description() {
        return server.description();
    }

    @Override
    public void listen(ReleaseListener listener) {
        this.listener = listener;
    }

    @Override
    public void start(String clientId) {
        link = server.connect(clientId, listener);
    }

    private InMemoryLockServer.Link link() {
        InMemoryLockServer.Link l = link;
        if (l == null) {
            throw new IllegalStateException("backend on " + server.description() + " used before start");
        }
        return l;
    }

    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        return server.tryAcquire(link(), request);
    }

    @Override
    public void withdraw(AcquireRequest request) {
        server.withdraw(link(), request);
    }

    @Override
    public boolean release(LeaseKey lease) {
        return server.release(link(), lease);
    }

    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        return server.renew(link(), leases, leaseTime);
    }

    @Override
    public boolean confirm(LeaseKey lease) {
        return server.confirm(link(), lease);
    }

    @Override
    public List<LockInfo> inspect() {
        return server.inspect(link());
    }

    /** Disconnects; a reachable client's places in line are withdrawn with it. */
    @Override
    public void close() {
        InMemoryLockServer.Link l = link;
        if (l != null) {
            server.disconnect(l);
        }
    }
}
