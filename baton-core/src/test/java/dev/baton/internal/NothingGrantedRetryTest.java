package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.NothingGrantedException;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LockClients;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An attempt that failed but certainly granted nothing (the backend's connection was down: the request was never sent)
 * does not end a waiting acquire: it tries again until its deadline. Found with {@code baton run --wait 60s} across a
 * 2 s restart of Redis, which exited 69 ("unreachable") after 3.6 s instead of waiting and taking the lock.
 */
class NothingGrantedRetryTest {

    /** Fails the first {@code failures} attempts with {@code error}, then grants as {@link CapabilitiesTest.Base}. */
    static final class Backend extends CapabilitiesTest.Base {
        final AtomicInteger attempts = new AtomicInteger();
        volatile int failures;
        volatile boolean unknownOutcome;
        volatile Runnable beforeAttempt = () -> { };

        @Override
        public synchronized AcquireResult tryAcquire(AcquireRequest request) {
            beforeAttempt.run();
            if (attempts.incrementAndGet() <= failures) {
                if (unknownOutcome) {
                    throw new LockBackendException("retry-test", "acquire has an unknown outcome", null);
                }
                throw new NothingGrantedException("retry-test", "acquire was not sent: disconnected", null);
            }
            return super.tryAcquire(request);
        }
    }

    static final class Builder extends AbstractClientBuilder<Builder> {
        final Backend backend = new Backend();

        @Override
        public LockClient build() {
            return LockClients.create(backend, settings());
        }
    }

    @Test
    void aWaitingAcquireTriesAgainAfterAttemptsThatGrantedNothing() {
        Builder b = new Builder().maxPollInterval(Duration.ofMillis(20));
        b.backend.failures = 5;
        try (LockClient client = b.build(); Lease lease = client.lock("x").acquire(Duration.ofSeconds(10))) {
            assertThat(lease.isValid()).isTrue();
            assertThat(b.backend.attempts).hasValue(6);
        }
    }

    @Test
    void aTryOnceThrowsAtOnce() {
        Builder b = new Builder();
        b.backend.failures = 1;
        try (LockClient client = b.build()) {
            assertThatThrownBy(() -> client.lock("x").tryAcquire()).isInstanceOf(NothingGrantedException.class);
            assertThat(b.backend.attempts).hasValue(1);
        }
    }

    @Test
    void theWaitEndsWithTheErrorWhenTheBackendStaysUnreachableUntilItsDeadline() {
        Builder b = new Builder().maxPollInterval(Duration.ofMillis(20));
        b.backend.failures = Integer.MAX_VALUE;
        try (LockClient client = b.build()) {
            assertThatThrownBy(() -> client.lock("x").acquire(Duration.ofMillis(300)))
                    .isInstanceOf(NothingGrantedException.class).hasMessageContaining("not sent");
            assertThat(b.backend.attempts.get()).isGreaterThan(2);
        }
    }

    @Test
    void anUnknownOutcomeIsNotRetried() {
        Builder b = new Builder().maxPollInterval(Duration.ofMillis(20));
        b.backend.failures = 1;
        b.backend.unknownOutcome = true;
        try (LockClient client = b.build()) {
            assertThatThrownBy(() -> client.lock("x").acquire(Duration.ofSeconds(10)))
                    .isInstanceOf(LockBackendException.class).isNotInstanceOf(NothingGrantedException.class);
            assertThat(b.backend.attempts).hasValue(1);
        }
    }

    /**
     * An acquire without a deadline that the backend keeps refusing (disconnected) would wait silently for ever: it
     * says so at WARN on the first refusal, naming the lock and the error, then at most every 10 s.
     */
    @Test
    void anAcquireWithoutADeadlineRefusedAgainAndAgainSaysSoAtWarnNowAndThen() {
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000_000_000L);
        Builder b = new Builder().maxPollInterval(Duration.ofMillis(20)).ticker(clock::get);
        b.backend.failures = 5;
        b.backend.beforeAttempt = () -> clock.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(4));
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true));
        try (LockClient client = b.build(); Lease lease = client.lock("refused-forever").acquire()) {
            assertThat(lease.isValid()).isTrue();
        } finally {
            System.setErr(err);
        }
        // refusals at 4, 8, 12, 16 and 20 s: said at 4 and 16 s
        assertThat(captured.toString().lines().filter(l -> l.contains("WARN")
                && l.contains("'refused-forever'") && l.contains("not sent: disconnected"))).hasSize(2);
    }
}
