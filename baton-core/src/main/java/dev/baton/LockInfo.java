package dev.baton;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

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
 * @param line         the places in line for the lock, first first (empty when nobody waits, and from backends
 *                     that do not show their line: today ZooKeeper and the JDBC session strategy). A place whose
 *                     waiter's heartbeat stopped is listed, {@linkplain Waiter#alive() dead}, until the backend
 *                     deletes it (JDBC; Redis drops dead places before it lists a line). A lock free but kept for
 *                     the first live waiter ({@link #keptFor()}) is listed with {@code held} false and this line
 *                     (with no grant known: holder {@code null}, token {@code -1}, no times, if the lock has no
 *                     row or key of its own)
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
     * The waiter a free lock is kept for: the first live place in its line while the lock is not held. Only that
     * waiter can take the lock (any other acquire, {@code tryAcquire()} included, is refused as if the lock were
     * held); it does within a moment, or its place dies with its heartbeat.
     *
     * @return the head of the line of a free lock, or empty if the lock is held or nobody live waits
     */
    public Optional<Waiter> keptFor() {
        return held ? Optional.empty() : line.stream().filter(Waiter::alive).findFirst();
    }

    /**
     * One place in a lock's line.
     *
     * @param owner      the waiter's id (the client's id and its thread), as a holder's is shown
     * @param since      when it took its place (server clock)
     * @param aliveUntil when its place expires unless its client's heartbeat renews it (server clock)
     * @param alive      whether the place was alive when the server listed it ({@code aliveUntil} was still
     *                   ahead by the server's clock); a dead place counts for nothing: it is a waiter that died or
     *                   left without withdrawing, waiting for the backend to delete it
     */
    public record Waiter(String owner, Instant since, Instant aliveUntil, boolean alive) {
        /** A live place. */
        public Waiter(String owner, Instant since, Instant aliveUntil) {
            this(owner, since, aliveUntil, true);
        }
    }
}
