package dev.baton.spi;

import java.time.Duration;

/**
 * Capability of a backend whose server can block a caller until the lock is free (PostgreSQL
 * {@code pg_advisory_lock} under {@code lock_timeout}, MariaDB/MySQL {@code GET_LOCK(name, timeout)}). The core
 * waits there in short slices, so that it notices interruption, its deadline and closing between them.
 */
public interface BlockingWait extends LockBackend {

    /**
     * Waits on the server for the lock, at most {@code slice}.
     *
     * @return {@link Outcome.Decided} with the grant or the busy holder at the slice's end, or
     *         {@link Outcome.NotNow} when no blocking wait is available to this caller right now (for example
     *         another thread of this client already waits on the server's only waiting session); the core then
     *         parks as after a busy attempt, woken by a local release, a notification or its backoff
     */
    Outcome awaitGrant(AcquireRequest request, Duration slice);

    /** What one wait slice ended with. */
    sealed interface Outcome {

        /** The server decided: granted, or still busy when the slice ended. */
        record Decided(AcquireResult result) implements Outcome {
            public Decided {
                java.util.Objects.requireNonNull(result, "result");
            }
        }

        /**
         * No server-side wait was possible for this caller right now.
         *
         * @param reason why, for the debug log
         */
        record NotNow(String reason) implements Outcome {
        }
    }
}
