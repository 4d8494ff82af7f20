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
}
