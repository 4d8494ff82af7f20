package dev.baton.spring.integration;

import dev.baton.Lease;
import dev.baton.LockClient;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * A Spring Integration lock registry on any Baton {@link LockClient}: {@link #obtain} gives a {@link BatonLock} per
 * key ({@code key.toString()} is the Baton lock name, with an optional prefix), shared by every process on the same
 * backend. It works under {@code LockRegistryLeaderInitiator}: the leader holds the role's lock, its fencing token
 * is a token per term ({@link #fencingToken(Object)}), and a leader whose lease was lost is revoked at its next
 * heartbeat.
 *
 * <p>Renewal: Baton renews every held lease in the background, at a third of the client's lease time, so nothing
 * needs to call {@link #renewLock(Object)}; it confirms with the server that the calling thread's lease is still
 * held. The lease time is the client's ({@code leaseTime} on its builder), not per lock, so
 * {@link #renewLock(Object, Duration)} is refused.
 *
 * <p>Thread safety: one instance serves every thread.
 */
public final class BatonLockRegistry implements ExpirableLockRegistry<BatonLock>, RenewableLockRegistry<BatonLock> {
    private final LockClient client;
    private final String prefix;
    private final ConcurrentMap<String, BatonLock> locks = new ConcurrentHashMap<>();

    /**
     * A registry on this client, lock names as given. The client stays the caller's: the registry never closes it.
     *
     * @throws IllegalArgumentException if the client is null
     */
    public BatonLockRegistry(LockClient client) {
        this(client, "");
    }

    /**
     * A registry on this client whose lock names are {@code prefix + key}, to keep its names apart from the
     * application's other Baton locks.
     *
     * @throws IllegalArgumentException if the client or prefix is null
     */
    public BatonLockRegistry(LockClient client, String prefix) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null (use \"\" for none)");
        }
        this.client = client;
        this.prefix = prefix;
    }

    /**
     * The lock for this key: the same object for the same key until {@link #expireUnusedOlderThan} drops it.
     *
     * @throws IllegalArgumentException if the key is null or its name is not a valid Baton lock name
     */
    @Override
    public BatonLock obtain(Object lockKey) {
        String name = name(lockKey);
        return locks.computeIfAbsent(name, n -> new BatonLock(client.lock(n)));
    }

    /**
     * The fencing token of this process's current hold of the key's lock (for a leader election: of the current
     * term), or empty if no thread here holds it.
     *
     * @throws IllegalArgumentException if the key is null
     */
    public OptionalLong fencingToken(Object lockKey) {
        BatonLock lock = locks.get(name(lockKey));
        return lock == null ? OptionalLong.empty() : lock.fencingToken();
    }

    /**
     * Drops the locks not held by any thread and not used for {@code age} milliseconds; a later {@link #obtain}
     * makes a new one. Locks held are kept.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        long ageNanos = Duration.ofMillis(Math.max(0, age)).toNanos();
        locks.values().removeIf(l -> !l.isHeld() && now - l.lastUsedNanos() > ageNanos);
    }

    /**
     * Confirms with the server that the calling thread's hold of the key's lock is still valid (Baton renews it in
     * the background; see {@link Lease#checkValid()}).
     *
     * @throws IllegalStateException        if the calling thread does not hold the lock
     * @throws dev.baton.LockLostException    if the lease was lost
     * @throws dev.baton.LockBackendException if the server could not be asked
     */
    @Override
    public void renewLock(Object lockKey) {
        BatonLock lock = locks.get(name(lockKey));
        if (lock == null || !lock.isHeldByCurrentThread()) {
            throw new IllegalStateException("the lock '" + name(lockKey) + "' is not held by thread "
                    + Thread.currentThread().getName() + ": nothing to renew");
        }
        lock.currentLease().orElseThrow().checkValid();
    }

    /**
     * Refused: Baton leases are renewed in the background for the client's lease time, which is set once on the
     * client's builder ({@code leaseTime}), not per lock.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public void renewLock(Object lockKey, Duration timeToLive) {
        throw new UnsupportedOperationException("Baton renews '" + name(lockKey) + "' in the background for the "
                + "client's lease time (leaseTime on its builder); a per-lock time to live (" + timeToLive
                + ") is not supported: use renewLock(key) to confirm the lease");
    }

    /** The client this registry takes its locks from. */
    public LockClient client() {
        return client;
    }

    private String name(Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("lockKey must not be null");
        }
        return prefix + lockKey;
    }

    @Override
    public String toString() {
        return "BatonLockRegistry[" + client.backend() + (prefix.isEmpty() ? "" : ", prefix '" + prefix + "'") + "]";
    }
}
