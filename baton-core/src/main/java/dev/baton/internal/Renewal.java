package dev.baton.internal;

import dev.baton.LockBackendException;
import dev.baton.LockObserver;
import dev.baton.spi.ClearsLostGrants;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.ReportsTimeLeft;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Keeping held leases and calling them lost: the renewal of every held lease in one backend call per interval
 * ({@link #renewAll}, the renewer thread), the watchdog that marks leases lost when their conservative deadline
 * passes ({@link #expireOverdue}, the watchdog thread, so a renewal stuck in the network cannot delay the loss
 * notice), and the renewal of overdue leases ({@link #renewOverdue}, the confirmer thread). A grant the server no
 * longer shows as ours is lost at once.
 *
 * <p>The deadline: the monotonic time the grant's (or last renewal's) request was <em>sent</em> + the lease time
 * less a clock drift margin ({@link ClientSettings#localValidity()}, as Redlock's validity time), so a lease turns
 * invalid here before the server frees it even if the server's clock runs somewhat fast. A stepped server clock no
 * margin covers: over a {@link ReportsTimeLeft} backend each renewal also checks that the server still had at least
 * until the deadline left on the grant, else the lease is lost at once (see {@link #steppedClock}).
 *
 * <p>A passed deadline over a backend that {@link ConfirmsGrants confirms grants}: if no renewal of the lease failed
 * (this process was paused, by a long GC or a stopped container, or a renewal is late), the passed deadline is only
 * uncertain: the lease is not valid, and it is renewed once more, on a thread of its own, before anything calls it
 * lost (the leases one watchdog pass finds overdue are renewed together, in one call). Renewed (the server still
 * showed the grant, owner and token, and extended it): valid again. Not renewed, or the server could not be asked
 * (unless a regular renewal extended the lease meanwhile), or no answer within half the lease time (at least 250 ms,
 * at most 1 s): lost. A lease whose renewal failed is lost at its deadline, as over every other backend.
 *
 * <p>It keeps no state of its own but that bound: the holds are the client's, each {@link Hold}'s state is
 * guarded by that hold's monitor. It logs under the client's logger name.
 */
final class Renewal {
    private static final Logger log = LoggerFactory.getLogger(CoreLockClient.class);

    private final CoreLockClient client;
    private final SessionWatch session;
    /** Renews leases whose deadline passed without a failed renewal (see the class comment). */
    private final Executor confirmer;
    /** How long such a renewal may take before the lease is lost all the same. */
    private final long overdueBoundNanos;

    Renewal(CoreLockClient client, SessionWatch session, Executor confirmer) {
        this.client = client;
        this.session = session;
        this.confirmer = confirmer;
        this.overdueBoundNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(250),
                Math.min(client.settings.leaseTime().toNanos() / 2, TimeUnit.SECONDS.toNanos(1)));
    }

    /** Renews every held lease in one backend call. Runs on the renewer thread. */
    void renewAll() {
        try {
            List<Hold> batch = new ArrayList<>();
            for (Hold h : client.holds.values()) {
                if (h.isValid(client.now())) {
                    batch.add(h);
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            List<LeaseKey> keys = new ArrayList<>(batch.size());
            batch.forEach(h -> keys.add(h.key));
            // the deadlines this round's time-left check is about: a renewal of an overdue lease may extend one
            // while this round is under way, after its time left was read on the server
            long[] deadlinesAtSend = new long[batch.size()];
            for (int i = 0; i < deadlinesAtSend.length; i++) {
                deadlinesAtSend[i] = batch.get(i).deadlineNanos();
            }
            long sent = client.now();
            Set<LeaseKey> renewed;
            Map<LeaseKey, Duration> timeLeft = null;
            try {
                if (client.backend instanceof ReportsTimeLeft reporting) {
                    timeLeft = reporting.renewReportingTimeLeft(keys, client.settings.leaseTime());
                    renewed = timeLeft.keySet();
                } else {
                    renewed = client.backend.renew(keys, client.settings.leaseTime());
                }
            } catch (LockBackendException e) {
                log.warn("renewal of {} lease(s) failed on {}: {}", keys.size(), client.description, e.getMessage());
                batch.forEach(h -> h.renewalFailed(true));
                if (client.observer != null) {
                    client.observer.renewed(0, keys.size(), client.now() - sent);
                }
                return;
            }
            batch.forEach(h -> h.renewalFailed(false));
            long received = client.now();
            long deadline = sent + client.validityNanos;
            int ok = 0;
            for (int i = 0; i < batch.size(); i++) {
                Hold h = batch.get(i);
                String stepped = timeLeft == null ? null
                        : steppedClock(h, timeLeft.get(h.key), received, deadlinesAtSend[i]);
                if (stepped == null && renewed.contains(h.key)) {
                    ok++;
                }
                if (stepped != null) {
                    // renewed on the server, but its grant had less time left there than this client counted on:
                    // the server may end grants before their local deadlines, so this one is not trusted any more.
                    // The server would keep it for a whole lease, held by nobody: a backend that clears lost grants
                    // does so now (else it ends there with its lease, or when the lease is closed).
                    if (h.markLost(stepped, LockObserver.LossCause.CLOCK_JUMP, null)) {
                        clearLost(h);
                    }
                } else if (renewed.contains(h.key)) {
                    h.extendDeadline(deadline);
                } else if (h.state() == Hold.State.HELD) {
                    // the server said it no longer shows the grant; an answer that came after the deadline says the
                    // lease had lapsed here first (isValid() was false), and the server's answer is still the cause
                    boolean lapsed = client.now() - h.deadlineNanos() >= 0;
                    if (h.markLost(lapsed ? deadlineReason() + ", and the renewal's late answer showed that the"
                                    + " server no longer has the grant"
                                    : "the server no longer shows this grant (it expired there or was taken over)",
                            LockObserver.LossCause.NOT_ON_SERVER, null) && lapsed) {
                        clearLost(h);
                    }
                }
            }
            if (client.observer != null) {
                client.observer.renewed(ok, batch.size() - ok, received - sent);
            }
        } catch (RuntimeException e) {
            log.error("unexpected error in lease renewal on {}", client.description, e);
        } finally {
            session.confirmUncertain();
        }
    }

    /**
     * The renewal check of a {@link ReportsTimeLeft} backend: the script that renewed the grant ran at some moment
     * before {@code received} and found {@code left} on it, so the server would have ended it by
     * {@code received + left}. That must not come before the lease's local deadline, which by construction (send
     * time + lease time - drift) a healthy server never undercuts: the server's expiry is at least the renewal's send
     * time + lease time, and the drift margin's 2 ms cover the server's millisecond rounding. If it does come before,
     * the server's clock jumped forward by about the difference (or the grant's expiry was changed on the server),
     * and {@code isValid()} was true while the server could already have freed the lock. Returns the loss's reason
     * then, else null.
     *
     * <p>The deadline compared is {@code deadlineAtSend}, the one the client counted on when this renewal was sent,
     * not the lease's deadline now: a renewal of the overdue lease may have extended it meanwhile, after this
     * renewal had read the time left on the server.
     */
    private String steppedClock(Hold h, Duration left, long received, long deadlineAtSend) {
        if (left == null || h.state() != Hold.State.HELD) {
            return null;
        }
        long counted = deadlineAtSend - received;
        long shortBy = counted - CoreLock.saturatedNanos(left);
        if (shortBy <= 0) {
            return null;
        }
        return "the renewal found " + left.toMillis() + " ms left on the grant on the server, " + millis(shortBy)
                + " ms less than this client counted on (" + millis(Math.max(0, counted)) + " ms until its local"
                + " deadline): the server's clock jumped forward or the grant's expiry was changed there, so the"
                + " server may end grants before their deadlines";
    }

    /** Why a lease whose local deadline passed is lost, whoever noticed: the watchdog, a release or a renewal. */
    String deadlineReason() {
        return "no successful renewal before its deadline (lease time " + client.settings.leaseTime().toMillis()
                + " ms)";
    }

    /**
     * Marks leases lost once their conservative deadline has passed; those whose renewals did not fail are renewed
     * once first, on the confirmer thread, and lost only if that does not renew them in time. The leases a pass finds
     * newly overdue are renewed together, in one backend call (after a pause, every held lease is overdue at once:
     * one round trip each would run the bound out for the last ones), and the bound counts from that pass. Runs on
     * the watchdog thread.
     */
    void expireOverdue() {
        List<Hold> newlyOverdue = new ArrayList<>();
        try {
            long now = client.now();
            for (Hold h : client.holds.values()) {
                if (h.state() != Hold.State.HELD || now - h.deadlineNanos() < 0) {
                    continue;
                }
                String reason = deadlineReason();
                if (reconfirms(h)) {
                    if (h.startOverdue(now)) {
                        newlyOverdue.add(h);
                        continue;
                    }
                    if (!h.overdueLongerThan(overdueBoundNanos, now)) {
                        continue; // the renewal is under way
                    }
                    reason = "its local deadline passed and the server did not renew it within "
                            + millis(overdueBoundNanos) + " ms (lease time " + client.settings.leaseTime().toMillis()
                            + " ms)";
                }
                if (h.markLost(reason, LockObserver.LossCause.DEADLINE, null)) {
                    clearLost(h);
                }
            }
        } finally {
            if (!newlyOverdue.isEmpty()) {
                try {
                    confirmer.execute(() -> client.neverEnds("renewal of overdue leases",
                            () -> renewOverdue(newlyOverdue)));
                } catch (RejectedExecutionException e) {
                    // closing
                }
            }
        }
    }

    /**
     * Whether a lease whose local deadline passed is renewed once before it is called lost: over a backend that
     * {@link ConfirmsGrants}, when no renewal of it failed (so the deadline passed because this process did not run,
     * or a renewal is late, not because the server could not be reached or refused).
     */
    private boolean reconfirms(Hold h) {
        return client.backend instanceof ConfirmsGrants && !h.renewalFailed();
    }

    /**
     * If {@code h} is HELD past its local deadline and {@link #reconfirms} it, renews it now, in this thread (a
     * caller about to rely on it: {@code checkValid()}, a re-entry, the release). Returns whether it did.
     */
    boolean settleOverdue(Hold h) {
        if (h.state() != Hold.State.HELD || client.now() - h.deadlineNanos() < 0 || !reconfirms(h)) {
            return false;
        }
        h.startOverdue(client.now());
        renewOverdue(List.of(h));
        return true;
    }

    /**
     * Renews leases whose local deadline passed though no renewal of them failed, in one backend call (as
     * {@link #renewAll} does). Renewed by the server (owner and token still there, unexpired by its clock, now
     * extended): valid again until send time + validity. Not shown by the server: lost. The call failed: lost (nothing
     * proves the grant), unless a regular renewal answered meanwhile and extended the lease past now: then it is
     * simply valid again. A renewal that comes back after the watchdog gave up on a lease clears the grant again, as
     * the release of a lost lease does.
     */
    private void renewOverdue(List<Hold> overdue) {
        List<Hold> batch = new ArrayList<>(overdue.size());
        for (Hold h : overdue) {
            if (h.state() == Hold.State.HELD) {
                batch.add(h);
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        List<LeaseKey> keys = new ArrayList<>(batch.size());
        batch.forEach(h -> keys.add(h.key));
        boolean interrupted = Thread.interrupted(); // on a user's thread: a pool refuses an interrupted borrower
        try {
            long sent = client.now();
            Set<LeaseKey> renewed;
            try {
                renewed = client.backend.renew(keys, client.settings.leaseTime());
                if (client.backend instanceof ConfirmsGrants confirming && !confirming.renewalAsksTheServer()) {
                    // a renewal that may answer without the server (a busy session): only the server's answer counts
                    Set<LeaseKey> confirmed = new HashSet<>();
                    for (LeaseKey key : renewed) {
                        if (confirming.confirm(key)) {
                            confirmed.add(key);
                        }
                    }
                    renewed = confirmed;
                }
            } catch (LockBackendException e) {
                for (Hold h : batch) {
                    if (client.now() - h.deadlineNanos() < 0) {
                        h.endOverdue(); // a regular renewal answered meanwhile: valid again by that one
                    } else if (h.markLost(deadlineReason() + ", and renewing it then failed: " + e.getMessage(),
                            LockObserver.LossCause.DEADLINE, e)) {
                        clearLost(h);
                    }
                }
                return;
            }
            for (Hold h : batch) {
                if (!renewed.contains(h.key)) {
                    h.markLost("its local deadline passed (this process was paused, or its renewal was late) and"
                            + " the server no longer shows the grant", LockObserver.LossCause.NOT_ON_SERVER, null);
                    continue;
                }
                h.extendDeadline(sent + client.validityNanos);
                if (client.now() - h.deadlineNanos() < 0) {
                    h.endOverdue();
                }
                if (h.state() == Hold.State.LOST) {
                    try {
                        // lost meanwhile (the watchdog gave up on this renewal): clear again
                        client.backend.release(h.key);
                    } catch (RuntimeException e) {
                        log.debug("clearing lost lease '{}' after a late renewal failed", h.key.name(), e);
                    }
                }
            }
        } catch (RuntimeException e) {
            log.error("unexpected error renewing {} overdue lease(s) on {}", batch.size(), client.description, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A lease lost by its deadline: a backend whose server may keep the grant longer clears it now. */
    private void clearLost(Hold h) {
        if (client.backend instanceof ClearsLostGrants clearing) {
            try {
                clearing.lost(h.key);
            } catch (RuntimeException e) {
                log.warn("clearing lost lease '{}' (token {}) on {} failed; it is cleared when the lease is closed",
                        h.key.name(), h.key.token(), client.description, e);
            }
        }
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
