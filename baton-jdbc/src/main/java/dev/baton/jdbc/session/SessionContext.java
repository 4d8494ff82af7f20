package dev.baton.jdbc.session;

import java.sql.SQLException;
import java.time.Duration;

/** What a {@link SessionStatements} attempt needs from the dedicated session it runs on. */
interface SessionContext {
    /** The {@code lock_timeout} last set on the session (PostgreSQL), or null. */
    String lastLockTimeout();

    void lastLockTimeout(String timeout);

    /** Marks a server-side blocking wait in flight ({@code wait} non-null), so a release can cancel it. */
    void beginBlocking(Duration wait);

    /** Ends the mark of {@link #beginBlocking}. */
    void endBlocking(Duration wait);

    /** Refuses (and discards the session) if the statement ran on another server session than this one's. */
    void checkServerId(long id);

    /** Whether a blocking wait ended without the lock: its timeout, a deadlock check, or our own cancel. */
    boolean slicedOut(SQLException e);
}
