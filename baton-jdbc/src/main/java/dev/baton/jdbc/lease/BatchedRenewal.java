package dev.baton.jdbc.lease;

import dev.baton.jdbc.readwrite.ReadWriteTable;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The renewal of a client's grants: plain leases in one statement on the lease table and read-write holds in one on
 * the read-write table (more only past {@link LeaseTable#renewBatch} keys), over one connection; a plain lease not
 * renewed is lost, and its hold ended for the wake-up mechanism.
 */
final class BatchedRenewal {
    private final LeaseTable table;
    private final ReadWriteTable rwTable;
    private final AutoCommittedCalls calls;
    /** Told of each plain lease the renewal found lost (MariaDB: no release will let its bell go). */
    private final WakeUps wakeUps;

    BatchedRenewal(LeaseTable table, ReadWriteTable rwTable, AutoCommittedCalls calls, WakeUps wakeUps) {
        this.table = table;
        this.rwTable = rwTable;
        this.calls = calls;
        this.wakeUps = wakeUps;
    }

    /**
     * Renews {@code leases} for {@code leaseTime}; returns those renewed, each with its time left on its row before the
     * renewal when {@code timeLeft} (else, and for read-write holds, the lease time).
     */
    Map<LeaseKey, Duration> renew(Collection<LeaseKey> leases, Duration leaseTime, boolean timeLeft) {
        List<LeaseKey> plain = new ArrayList<>();
        List<LeaseKey> rw = new ArrayList<>();
        for (LeaseKey k : leases) {
            (k.mode() == LockMode.EXCLUSIVE ? plain : rw).add(k);
        }
        long millis = leaseTime.toMillis();
        int plainBatch = table.renewBatch();
        // the read-write table lists keys as OR terms in every dialect (3 parameters each)
        int rwBatch = Math.min(plainBatch, 1_000);
        Map<LeaseKey, Duration> result = calls.run("renewal of " + leases.size() + " lease(s)", c -> {
            Map<LeaseKey, Duration> renewed = new HashMap<>();
            inBatches(plain, plainBatch, part -> {
                if (timeLeft) {
                    renewed.putAll(table.renewReportingTimeLeft(c, part, millis));
                } else {
                    table.renew(c, part, millis).forEach(k -> renewed.put(k, leaseTime));
                }
            });
            inBatches(rw, rwBatch, part -> rwTable.renew(c, part, millis).forEach(k -> renewed.put(k, leaseTime)));
            return renewed;
        }, true);
        for (LeaseKey k : plain) {
            if (!result.containsKey(k)) {
                wakeUps.holdEnded(k.name(), k.token()); // lost: no release will let its bell go
            }
        }
        return result;
    }

    private interface Batch {
        void accept(List<LeaseKey> part) throws SQLException;
    }

    /** Calls {@code batch} on consecutive slices of at most {@code size} keys. */
    private static void inBatches(List<LeaseKey> keys, int size, Batch batch) throws SQLException {
        for (int i = 0; i < keys.size(); i += size) {
            batch.accept(keys.subList(i, (int) Math.min(keys.size(), (long) i + size)));
        }
    }
}
