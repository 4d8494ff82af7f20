package dev.baton.testkit;

import dev.baton.Lease;
import dev.baton.LockClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rung 4b — session locks: a hold lives exactly as long as the server session that holds it. The server
 * frees it when the session ends, the client reports every lease on a lost session lost once, and all of a
 * client's locks share a constant number of sessions. The lease rung does not apply (a session lock has no
 * lease time on the server, so nothing expires and nothing can be taken over after expiry); its
 * counterpart here is the session kill. The top rung for session strategies.
 */
public abstract class SessionContract extends LivenessContract {

    @Override
    protected Duration deadHolderBound(Duration leaseTime) {
        return RECOVERY_SLACK;
    }

    @Test
    void killingTheSessionLosesEveryLeaseOnItOnceAndAWaiterGetsTheLock() throws Exception {
        Duration lease = Duration.ofSeconds(2);
        String base = unique("session-kill");
        try (LockClient a = fixture.newClient(ClientConfig.lease(lease)); LockClient b = client()) {
            List<Lease> held = new ArrayList<>();
            AtomicInteger lost = new AtomicInteger();
            for (int i = 0; i < 3; i++) {
                Lease l = a.lock(base + i).acquire(Duration.ofSeconds(5));
                l.onLost(e -> lost.incrementAndGet());
                held.add(l);
            }
            CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
                try (Lease l = b.lock(base + 0).acquire(Duration.ofSeconds(20))) {
                    return System.nanoTime();
                }
            });
            Thread.sleep(300);
            long killed = System.nanoTime();
            fixture.killServerSessions(a);
            long granted = waiter.get(20, TimeUnit.SECONDS);
            await().atMost(lease.plus(RECOVERY_SLACK)).until(() -> lost.get() == 3);
            long lostMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            System.out.printf("[%s] session killed: waiter granted after %d ms, all 3 leases reported lost by %d ms"
                    + " (lease %d ms)%n", fixture.name(), TimeUnit.NANOSECONDS.toMillis(granted - killed), lostMs,
                    lease.toMillis());
            assertThat(TimeUnit.NANOSECONDS.toMillis(granted - killed)).as("kill to waiter's grant, ms")
                    .isLessThanOrEqualTo(RECOVERY_SLACK.toMillis());
            assertThat(held).noneMatch(Lease::isValid);
            Thread.sleep(lease.toMillis());
            assertThat(lost).as("each listener once").hasValue(3);
            held.forEach(Lease::close);
            // the client opens a new session for what comes next
            try (Lease again = a.lock(base + 1).acquire(Duration.ofSeconds(5))) {
                assertThat(again.isValid()).isTrue();
            }
        }
    }

    @Test
    void aThousandHeldLocksCostAConstantNumberOfServerSessions() {
        String base = unique("thousand");
        try (LockClient a = client(); LockClient b = client()) {
            List<Lease> held = new ArrayList<>();
            held.add(a.lock(base + "-first").acquire(Duration.ofSeconds(5)));
            int withOne = fixture.serverSessions(a);
            for (int i = 0; i < 1000; i++) {
                held.add(a.lock(base + "-" + i).acquire(Duration.ofSeconds(5)));
            }
            int withThousand = fixture.serverSessions(a);
            System.out.printf("[%s] server sessions of a client holding 1 lock: %d; holding 1,001 locks: %d%n",
                    fixture.name(), withOne, withThousand);
            assertThat(withThousand).as("sessions with 1,001 locks held").isLessThanOrEqualTo(Math.max(withOne, 2) + 4);
            assertThat(b.lock(base + "-500").tryAcquire()).isEmpty();
            assertThat(held).allMatch(Lease::isValid);
            held.forEach(Lease::close);
            assertThat(b.lock(base + "-500").tryAcquire()).isPresent().get().satisfies(Lease::close);
        }
    }
}
