package dev.baton.testkit;

import dev.baton.Lease;
import dev.baton.LockClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rung 2 — fencing: every grant of a lock carries a token greater than every earlier grant's, whoever
 * holds it. Applies to every strategy.
 */
public abstract class FencingContract extends ExclusionContract {

    @Test
    void tokensStrictlyIncreaseAcrossHoldersAndClients() {
        String name = unique("tokens");
        List<LockClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                clients.add(client());
            }
            List<Long> tokens = new ArrayList<>();
            for (int round = 0; round < 30; round++) {
                LockClient c = clients.get((round * 7 + round / 3) % clients.size());
                try (Lease lease = c.lock(name).acquire(Duration.ofSeconds(5))) {
                    tokens.add(lease.fencingToken());
                    assertThat(lease.holderId()).startsWith(c.clientId());
                }
            }
            assertThat(tokens).isSorted().doesNotHaveDuplicates();
            assertThat(tokens.get(0)).isPositive();
        } finally {
            clients.forEach(LockClient::close);
        }
    }

    @Test
    void tokensOfDifferentLocksAreIndependentButEachIncreases() {
        try (LockClient a = client()) {
            String x = unique("x");
            String y = unique("y");
            long x1;
            long y1;
            try (Lease lx = a.lock(x).acquire(Duration.ofSeconds(5)); Lease ly = a.lock(y).acquire(Duration.ofSeconds(5))) {
                x1 = lx.fencingToken();
                y1 = ly.fencingToken();
            }
            try (Lease lx = a.lock(x).acquire(Duration.ofSeconds(5)); Lease ly = a.lock(y).acquire(Duration.ofSeconds(5))) {
                assertThat(lx.fencingToken()).isGreaterThan(x1);
                assertThat(ly.fencingToken()).isGreaterThan(y1);
            }
        }
    }
}
