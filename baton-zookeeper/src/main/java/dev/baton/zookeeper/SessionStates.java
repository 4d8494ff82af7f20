package dev.baton.zookeeper;

import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsSessionState;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session this client's nodes live in, and what Curator's connection states mean for them: SUSPENDED → the
 * leases are uncertain; RECONNECTED on the same session → resumed, and the deletes that could not reach the server
 * are made now; LOST, or a reconnection on another session → the session's nodes are gone, reported once. After any
 * reconnection every waiter looks at its line again, once (a watch may have fired unseen).
 */
final class SessionStates {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

    private final Calls calls;
    private final HeldNodes held;
    private final Places places;
    private final Deletes deletes;
    /** The session this client's nodes live in; 0 before start. */
    private volatile long knownSession;
    /** The session whose loss was reported (so it is reported once). */
    private volatile long lostSession;

    SessionStates(Calls calls, HeldNodes held, Places places, Deletes deletes) {
        this.calls = calls;
        this.held = held;
        this.places = places;
        this.deletes = deletes;
    }

    /** Starts from the session the client is on now. */
    void start() {
        knownSession = calls.currentSession();
    }

    /** The session whose loss was reported, or 0: its nodes are gone on the server. */
    long lostSession() {
        return lostSession;
    }

    /** Handles a connection state, telling the core's session listener {@code s} and release listener {@code r}. */
    void changed(ConnectionState state, ReportsSessionState.Listener s, ReleaseListener r) {
        switch (state) {
            case SUSPENDED -> {
                log.debug("{}: connection suspended", calls.description());
                s.suspended();
            }
            case RECONNECTED -> {
                long now = calls.currentSession();
                if (now == knownSession) {
                    log.debug("{}: reconnected on session 0x{}", calls.description(), Long.toHexString(now));
                    deletes.retry(knownSession);
                    s.resumed();
                } else {
                    sessionEnded(s);
                    knownSession = now;
                    log.info("{}: connected on a new session 0x{}", calls.description(), Long.toHexString(now));
                }
                places.heardAll(); // watches may have fired unseen: every waiter looks at its line again, once
                if (r != null) {
                    r.resynchronize();
                }
            }
            case LOST -> {
                sessionEnded(s);
                places.heardAll();
                if (r != null) {
                    r.resynchronize();
                }
            }
            default -> {
                // CONNECTED comes before start; READ_ONLY is never asked for
            }
        }
    }

    /** The known session ended: its nodes are gone on the server; report it once. */
    private void sessionEnded(ReportsSessionState.Listener s) {
        long ended = knownSession;
        if (lostSession == ended) {
            return;
        }
        lostSession = ended;
        log.warn("{}: session 0x{} ended (expired); every lease held on it is lost", calls.description(),
                Long.toHexString(ended));
        held.sessionEnded(ended);
        deletes.sessionEnded();
        s.sessionLost();
    }
}
