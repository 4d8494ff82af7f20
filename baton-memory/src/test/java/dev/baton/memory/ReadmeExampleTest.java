package dev.baton.memory;

import dev.baton.Lease;
import dev.baton.LockClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's example of baton-memory, as written there. */
class ReadmeExampleTest {

    @Test
    void twoClientsOnOneServerAndACrash() {
        InMemoryLockServer server = InMemoryLockServer.create();                     // one per test: the "database"
        try (LockClient a = InMemoryLocks.builder(server).build();                    // two clients: two "processes"
             LockClient b = InMemoryLocks.builder(server).leaseTime(Duration.ofSeconds(1)).build()) {
            Lease held = b.lock("nightly-report").acquire(Duration.ofSeconds(1));
            assertThat(a.lock("nightly-report").tryAcquire()).isEmpty();               // held by the other process
            server.crash(b);                                                          // b vanishes without releasing
            try (Lease next = a.lock("nightly-report").acquire(Duration.ofSeconds(5))) {   // once b's lease ran out
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }
}
