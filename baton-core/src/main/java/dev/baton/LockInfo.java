package dev.baton;

import java.time.Instant;
import java.util.List;

/**
 * What a backend knows about one lock, for introspection ({@code baton list}). Times come from the server's
 * clock and are for display: Baton never compares them with the local clock.
 *
 * @param name         the lock name, whole
 * @param holder       the holder's id while held, or {@code null} when free
 * @param fencingToken the token of the current or last grant, or {@code -1} if unknown
 * @param acquiredAt   when the current or last grant was made (server clock), or {@code null} if unknown
 * @param expiresAt    when the current lease runs out, or when it was released (server clock)
 * @param held         whether the lock is held now, as judged by the server
 * @param line         the live waiters in line for the lock, first first (empty when nobody waits, and from
 *                     backends that do not show their line: today the JDBC and ZooKeeper backends); a lock free
 *                     but kept for the first of them is listed with {@code held} false and this line
 */
public record LockInfo(String name, String holder, long fencingToken, Instant acquiredAt, Instant expiresAt,
                       boolean held, List<Waiter> line) {

    public LockInfo {
        line = line == null ? List.of() : List.copyOf(line);
    }

    /** A lock listed without its line. */
    public LockInfo(String name, String holder, long fencingToken, Instant acquiredAt, Instant expiresAt,
                    boolean held) {
        this(name, holder, fencingToken, acquiredAt, expiresAt, held, List.of());
    }

    /**
     * One place in a lock's line.
     *
     * @param owner      the waiter's id (the client's id and its thread), as a holder's is shown
     * @param since      when it took its place (server clock)
     * @param aliveUntil when its place expires unless its client's heartbeat renews it (server clock)
     */
    public record Waiter(String owner, Instant since, Instant aliveUntil) {
    }
}
