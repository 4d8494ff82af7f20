package dev.baton;

import java.time.Instant;

/**
 * What a backend knows about one lock, for introspection ({@code baton list}). Times come from the server's
 * clock and are for display: Baton never compares them with the local clock.
 *
 * @param name         the lock name, whole
 * @param holder       the holder's id while held, or {@code null} when free
 * @param fencingToken the token of the current or last grant
 * @param acquiredAt   when the current or last grant was made (server clock)
 * @param expiresAt    when the current lease runs out, or when it was released (server clock)
 * @param held         whether the lock is held now, as judged by the server
 */
public record LockInfo(String name, String holder, long fencingToken, Instant acquiredAt, Instant expiresAt,
                       boolean held) {
}
