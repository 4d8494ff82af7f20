package dev.baton.jdbc.session;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.jdbc.fixtures.PostgresSessionFixture;
import dev.baton.testkit.ClientConfig;
import dev.baton.testkit.LockFixture;
import dev.baton.testkit.ReadWriteContract;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The read-write rung on PostgreSQL's shared/exclusive advisory locks (session strategy). */
class PostgresSessionReadWriteIT extends ReadWriteContract {
    @Override
    protected LockFixture createFixture() {
        return new PostgresSessionFixture();
    }

    /** Regression: a session loss left the client's local read-write bookkeeping reserved forever. */
    @Test
    void aReadWriteLockCanBeTakenAgainAfterItsSessionWasKilled() {
        String name = unique("rw-session-kill");
        try (LockClient a = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(1))); LockClient b = client()) {
            Lease w = a.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5));
            AtomicInteger lost = new AtomicInteger();
            w.onLost(e -> lost.incrementAndGet());
            fixture.killServerSessions(a);
            await().atMost(Duration.ofSeconds(5)).until(() -> lost.get() == 1);
            w.close();
            try (Lease again = a.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5))) {
                assertThat(again.isValid()).isTrue();
                assertThat(b.readWriteLock(name).readLock().tryAcquire()).isEmpty();
            }
            try (Lease r = a.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5))) {
                assertThat(r.fencingToken()).isGreaterThan(w.fencingToken());
            }
        }
    }
}
