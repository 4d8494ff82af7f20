package dev.baton.checker;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Check (e)'s belief overlap against the lag of a lost notice. Seen under load in QuickProfileIT (lease strategy,
 * PostgreSQL × session-kill, lease 1 s): a holder whose renewals failed for a whole lease was notified lost 17 ms after
 * the next holder's grant — its {@code isValid()} had been false since its deadline — and the check called it an
 * unexplained overlap.
 */
class LateLostNoticeTest {
    private static final Duration MARGIN = Duration.ofMillis(1500);
    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final String DEADLINE = "lease on 'lock-0' (token 1010, holder w5.0/1/x#1) lost: no successful"
            + " renewal before its deadline (lease time 1000 ms)";
    private static final String TAKEN_OVER = "lease on 'lock-0' (token 1010, holder w5.0/1/x#1) lost: the server no"
            + " longer shows this grant (it expired there or was taken over)";

    @Test
    void aDeadlineLossNoticedAfterTheSuccessorsGrantWithinTheMarginIsTheNoticesLag() {
        assertThat(Analysis.lateDeadlineNotice(DEADLINE, Duration.ofMillis(17).toNanos(), LEASE, MARGIN)).isTrue();
    }

    @Test
    void aLossFoundOnTheServerIsNeverExcused() {
        assertThat(Analysis.lateDeadlineNotice(TAKEN_OVER, Duration.ofMillis(17).toNanos(), LEASE, MARGIN)).isFalse();
        assertThat(Analysis.lateDeadlineNotice(null, Duration.ofMillis(17).toNanos(), LEASE, MARGIN)).isFalse();
    }

    @Test
    void anOverlapLongerThanOneWatchdogTickPlusSchedulingIsNotANoticesLag() {
        // lease 1 s: the watchdog ticks every 50 ms; + 100 ms of scheduling
        assertThat(Analysis.lateDeadlineNotice(DEADLINE, Duration.ofMillis(150).toNanos(), LEASE, MARGIN)).isTrue();
        assertThat(Analysis.lateDeadlineNotice(DEADLINE, Duration.ofMillis(151).toNanos(), LEASE, MARGIN)).isFalse();
        // and never beyond the scenario's margin
        assertThat(Analysis.lateDeadlineNotice(DEADLINE, Duration.ofMillis(60).toNanos(), LEASE, Duration.ofMillis(50)))
                .isFalse();
    }

    /**
     * Seen in CI (QuickProfileIT, Redis × session-kill, lease 1 s): "w3.0.11 (token …592) and w1.0.10 (token …593)
     * both believed they held it for 5 ms". A holder whose renewals failed for a whole lease released it a few ms
     * after its deadline, before the watchdog's tick; the core now reports that loss during the release (its
     * listeners run on the releasing thread), so the worker's log reads: release invoked, lost, release done.
     */
    @Test
    void aReleaseDuringWhichTheCoreReportedTheDeadlineEndsTheBeliefWithThatNotice() {
        Analysis.Attempt a = new Analysis.Attempt();
        a.releaseT = 1_000;
        a.lostT = 1_002;
        a.releaseOutT = 1_010;
        assertThat(Analysis.endedByDeadlineNotice(a, a.beliefEnd())).isTrue();
    }

    @Test
    void aReleaseWithoutALostNoticeOrWithANoticeAfterItIsNotANotice() {
        Analysis.Attempt quiet = new Analysis.Attempt();
        quiet.releaseT = 1_000;
        quiet.releaseOutT = 1_010;
        assertThat(Analysis.endedByDeadlineNotice(quiet, quiet.beliefEnd())).isFalse();
        Analysis.Attempt later = new Analysis.Attempt();
        later.releaseT = 1_000;
        later.releaseOutT = 1_010;
        later.lostT = 1_020; // heard after the release had finished: not what the release found
        assertThat(Analysis.endedByDeadlineNotice(later, later.beliefEnd())).isFalse();
    }
}
