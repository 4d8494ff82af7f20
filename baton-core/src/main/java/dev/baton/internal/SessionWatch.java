package dev.baton.internal;

import dev.baton.LockBackendException;
import dev.baton.LockObserver;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.ReportsSessionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The backend's session as a {@link ReportsSessionState} backend reports it, and what it does to held leases: a
 * suspended session makes every held lease uncertain (not valid, not lost, its deadline still running); a resumed
 * one has each uncertain lease confirmed on the renewer thread (valid again, or lost); a lost session loses every
 * lease once. Other backends never report a state: the session then counts as never suspended.
 *
 * <p>It also owns asking a {@link ConfirmsGrants} backend whether the server still shows a grant
 * ({@link #confirm}, which {@code checkValid()} uses over every such backend), because an answer makes an uncertain
 * lease certain only if no suspension came between the question and the answer.
 *
 * <p>Thread safety: the suspended flag is volatile and the count of suspensions atomic; the session's events arrive
 * on the backend's threads, confirmations run on the renewer thread and on users' threads. It logs under the
 * client's logger name.
 */
final class SessionWatch {
    private static final Logger log = LoggerFactory.getLogger(CoreLockClient.class);

    private final CoreLockClient client;
    /** The client's renewer thread, where uncertain leases are confirmed after a resumption. */
    private final Executor renewer;
    /** The backend's session is suspended ({@link ReportsSessionState}): new grants start uncertain. */
    private volatile boolean suspended;
    /** How many suspensions the backend reported: a confirmation makes a lease certain only within one. */
    private final AtomicLong suspensions = new AtomicLong();

    SessionWatch(CoreLockClient client, Executor renewer) {
        this.client = client;
        this.renewer = renewer;
    }

    /** Whether the backend's session is suspended now: a grant recorded now starts uncertain. */
    boolean suspended() {
        return suspended;
    }

    void onSuspended() {
        suspensions.incrementAndGet();
        suspended = true;
        int n = 0;
        for (Hold h : client.holds.values()) {
            if (h.state() == Hold.State.HELD) {
                h.markUncertain();
                n++;
            }
        }
        if (n > 0) {
            log.warn("the session of {} is suspended: {} lease(s) uncertain (not valid) until confirmed",
                    client.description, n);
        }
    }

    void onResumed() {
        suspended = false;
        try {
            renewer.execute(this::confirmUncertain);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    void onSessionLost() {
        suspended = false; // that session is over: nothing on it is uncertain any more
        for (Hold h : client.holds.values()) {
            h.markLost("its server session ended (expired)", LockObserver.LossCause.SESSION_LOST, null);
        }
    }

    /**
     * Asks the server about each uncertain lease while the session is not suspended: confirmed, valid again; not
     * shown, lost. A failure leaves it uncertain until the next renewal round or its deadline. Renewer thread.
     */
    void confirmUncertain() {
        if (suspended || !(client.backend instanceof ReportsSessionState)) {
            return;
        }
        for (Hold h : client.holds.values()) {
            if (!h.isUncertain()) {
                continue;
            }
            try {
                confirm(h);
            } catch (LockBackendException e) {
                log.debug("confirming uncertain lease '{}' failed; it stays uncertain", h.key.name(), e);
            } catch (RuntimeException e) {
                log.error("unexpected error confirming lease '{}' on {}", h.key.name(), client.description, e);
            }
        }
    }

    /**
     * Asks a backend that {@link ConfirmsGrants} whether the server still shows the grant; marks the hold lost
     * (listeners run once) if it does not. Returns whether the grant is confirmed, or true without a round
     * trip for a backend that cannot confirm (its validity is the local one).
     */
    boolean confirm(Hold hold) {
        if (!(client.backend instanceof ConfirmsGrants confirming)) {
            return true;
        }
        long epoch = suspensions.get();
        long sent = client.now();
        boolean wasUncertain = hold.isUncertain();
        if (confirming.confirm(hold.key)) {
            if (wasUncertain && !suspended && suspensions.get() == epoch) {
                // shown by the server on a session that was not suspended since: as good as a renewal
                hold.extendDeadline(sent + client.validityNanos);
                hold.markCertain();
                if (suspended || suspensions.get() != epoch) {
                    hold.markUncertain(); // a suspension that came between the check and markCertain() wins
                }
            }
            return true;
        }
        hold.markLost(wasUncertain ? "the server no longer shows this grant after its session was suspended"
                : "the server no longer shows this grant (checked by checkValid)", LockObserver.LossCause.NOT_ON_SERVER,
                null);
        return false;
    }
}
