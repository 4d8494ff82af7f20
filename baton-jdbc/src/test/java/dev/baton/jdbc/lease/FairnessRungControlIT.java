package dev.baton.jdbc.lease;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockTimeoutException;
import dev.baton.jdbc.fixtures.ForwardingLockClient;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.FairLeaseContract;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The positive control of the fairness rung ({@link FairLeaseContract#checkTurns}): run on clients that do not wait in
 * line but retry a try-once acquisition every millisecond (ShedLock's way, the benchmark's strongest configuration of
 * it), the rung must fail, on its count of acquisitions overtaken by later askers. A thread that lets go asks again at
 * once, a millisecond before the others look, and takes the lock back.
 */
class FairnessRungControlIT {
    @Test
    void theFairnessRungFailsClientsThatRetryATryOnceAcquisitionEveryMillisecond() throws Exception {
        try (PostgresFixture fixture = new PostgresFixture()) {
            List<LockClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < FairLeaseContract.CLIENTS; i++) {
                    clients.add(new RetryingEveryMillisecond(fixture.newClient(ClientConfig.defaults())));
                }
                String name = "control-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
                assertThatThrownBy(() -> FairLeaseContract.checkTurns("control: try-once every 1 ms on postgresql",
                        clients, name, FairLeaseContract.MOST_OVERTAKEN, 20))
                        .isInstanceOf(AssertionError.class)
                        .hasMessageContaining("to acquisitions that asked after it");
            } finally {
                clients.forEach(LockClient::close);
            }
        }
    }

    /** A client whose waiting acquisitions are a try-once acquisition every millisecond until one succeeds. */
    private static final class RetryingEveryMillisecond extends ForwardingLockClient {
        private final LockClient delegate;

        RetryingEveryMillisecond(LockClient delegate) {
            super(delegate);
            this.delegate = delegate;
        }

        @Override
        public DistributedLock lock(String name) {
            DistributedLock lock = delegate.lock(name);
            return new DistributedLock() {
                @Override
                public String name() {
                    return lock.name();
                }

                @Override
                public Optional<Lease> tryAcquire() {
                    return lock.tryAcquire();
                }

                @Override
                public Lease acquire(Duration maxWait) {
                    long end = System.nanoTime() + maxWait.toNanos();
                    while (true) {
                        Optional<Lease> lease = lock.tryAcquire();
                        if (lease.isPresent()) {
                            return lease.get();
                        }
                        if (System.nanoTime() - end > 0) {
                            throw new LockTimeoutException(name, maxWait, null, -1, null,
                                    "lock " + name + " not acquired within " + maxWait);
                        }
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                    }
                }

                @Override
                public Lease acquire() {
                    return acquire(Duration.ofDays(1));
                }

                @Override
                public boolean isHeldByCurrentThread() {
                    return lock.isHeldByCurrentThread();
                }

                @Override
                public Lock asLock() {
                    throw new UnsupportedOperationException("not used by the rung");
                }
            };
        }
    }
}
