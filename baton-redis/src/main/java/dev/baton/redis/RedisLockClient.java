package dev.baton.redis;

import dev.baton.ForcedRelease;
import dev.baton.LockClient;
import dev.baton.LockInfo;

import java.util.Optional;
import java.util.OptionalLong;

/** A {@link LockClient} on Redis, with the operator's force release ({@code baton release --url redis://…}). */
public interface RedisLockClient extends LockClient {

    /** The key prefix this client's locks live under. */
    String keyPrefix();

    /**
     * An operator's force release of a stuck lock: ends the exclusive grant the server shows now, whoever holds
     * it, exactly as its holder's own release would (compare-and-delete on owner and token, waiters woken by the
     * release's message). With {@code token}, only the grant with that fencing token is released, so a grant made
     * after the operator looked is never ended by mistake. The holder learns at its next renewal that its lease is
     * lost; its own release or renewal cannot touch a successor's grant, because both match owner and token.
     * Read-write locks' grants are not touched.
     *
     * @param name  the lock name
     * @param token the fencing token of the grant to release, or empty for whichever grant is live
     * @return the grant released, or empty if the lock was not held (or held under another token)
     * @throws IllegalArgumentException      for an invalid name or a null token
     * @throws dev.baton.LockBackendException if Redis could not be reached
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token);

    /**
     * An operator's removal of a place in a lock's line ({@code baton release NAME --waiter OWNER}): removes
     * {@code owner} (a waiter's id as {@link dev.baton.LockInfo#line()} shows it) from the line of the exclusive
     * lock {@code name}, as the waiter's own withdrawal would (if it was the head of the line, the next waiter is
     * woken). A live waiter whose place is removed keeps waiting and takes a new place, at the back, at its next
     * attempt. Writers' claims of read-write locks are not touched.
     *
     * @param name  the lock name
     * @param owner the waiter's id
     * @return the place removed, as it was just before, or empty if {@code owner} had no live place in the line of
     *         {@code name} (a dead place is dropped by the same call, and reported as none)
     * @throws IllegalArgumentException      for an invalid name, or a null or empty owner
     * @throws dev.baton.LockBackendException if Redis could not be reached
     */
    Optional<LockInfo.Waiter> removeFromLine(String name, String owner);
}
