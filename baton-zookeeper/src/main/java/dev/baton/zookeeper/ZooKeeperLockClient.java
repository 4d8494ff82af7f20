package dev.baton.zookeeper;

import dev.baton.ForcedRelease;
import dev.baton.LockClient;

import java.util.Optional;
import java.util.OptionalLong;

/** A {@link LockClient} on ZooKeeper, with the operator's force release ({@code baton release --url zookeeper://…}). */
public interface ZooKeeperLockClient extends LockClient {

    /**
     * An operator's force release of a stuck lock: deletes the member node that holds the exclusive lock now,
     * whoever holds it (its client is told {@code onLost} at its next renewal, which reads the node), so the next
     * member in line gets the lock. With {@code token} (the holder's {@code czxid}), only that holder's node is
     * deleted, so a grant made after the operator looked is never ended by mistake. Read-write locks' members are not
     * touched. Usually the better fix is to stop the holder: its session ends and the server deletes its node.
     *
     * @param name  the lock name
     * @param token the fencing token of the grant to release, or empty for whichever member holds the lock
     * @return the grant released ({@link ForcedRelease#remaining()} is null: a session-bound hold has no lease
     *         left on the server), or empty if the lock was not held (or held under another token)
     * @throws IllegalArgumentException      for an invalid name or a null token
     * @throws dev.baton.LockBackendException if ZooKeeper could not be reached
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token);
}
