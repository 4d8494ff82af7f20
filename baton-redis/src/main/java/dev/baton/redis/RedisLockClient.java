package dev.baton.redis;

import dev.baton.ForcedRelease;
import dev.baton.LockClient;

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
}
