package dev.baton.jdbc.lease;

import dev.baton.ForcedRelease;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What an operator does to a lease table, beside the locks' own traffic: lists the locks with their lines, removes a
 * place from a line, purges dead rows and tickets, and force-releases a grant. {@link JdbcLeaseBackend} hands these
 * calls here.
 */
final class OperatorTools {
    private final LeaseTable table;
    private final AutoCommittedCalls calls;
    /** Told of a forced release, in case this client held the grant (MariaDB: its bell is let go). */
    private final WakeUps wakeUps;

    OperatorTools(LeaseTable table, AutoCommittedCalls calls, WakeUps wakeUps) {
        this.table = table;
        this.calls = calls;
        this.wakeUps = wakeUps;
    }

    /**
     * Every lease row (but the session strategy's markers) with its lock's line, dead places included; then every
     * lock that has a line but no row (never granted, or purged), listed free with no grant: its line keeps it
     * for its head all the same.
     */
    List<LockInfo> inspect() {
        record Listing(List<LockInfo> rows, Map<String, List<LockInfo.Waiter>> lines) {
        }
        Listing listing = calls.run("listing locks", c -> new Listing(table.inspect(c), table.lines(c)));
        Map<String, List<LockInfo.Waiter>> lines = new LinkedHashMap<>(listing.lines());
        List<LockInfo> out = new ArrayList<>();
        for (LockInfo row : listing.rows()) {
            // the session strategy's marker rows are claims on names, not leases: its own list shows its locks
            if (LeaseTable.SESSION_MARKER.equals(row.holder())) {
                continue;
            }
            List<LockInfo.Waiter> line = lines.remove(row.name());
            out.add(line == null ? row : new LockInfo(row.name(), row.holder(), row.fencingToken(), row.acquiredAt(),
                    row.expiresAt(), row.held(), line));
        }
        lines.forEach((name, line) -> out.add(new LockInfo(name, null, -1, null, null, false, line)));
        return out;
    }

    /** See {@link JdbcLeaseBackend#removeFromLine}. */
    Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
        return calls.run("removal of " + owner + "'s place in the line of '" + name + "'",
                c -> table.removePlace(c, name, owner));
    }

    /** See {@link JdbcLeaseBackend#purge}. */
    int purge(Duration olderThan) {
        calls.run("purge of expired tickets", table::purgeTickets);
        return calls.run("purge of rows expired more than " + olderThan.toMillis() + " ms ago",
                c -> table.purge(c, olderThan.toMillis()));
    }

    /** See {@link JdbcLeaseBackend#forceRelease}. */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        return calls.run("force release of '" + name + "'", c -> {
            for (int attempt = 0; attempt < 3; attempt++) {
                AcquireResult.Busy live = table.peek(c, name);
                // a session strategy's claim is not a lease: releasing it would let both strategies hold the name
                LeaseTable.refuseSessionMarker(live, name, table.table);
                if (live == null || live.holder() == null
                        || (token.isPresent() && live.token() != token.getAsLong())) {
                    return Optional.empty();
                }
                if (table.forceRelease(c, new LeaseKey(name, live.holder(), live.token()))) {
                    wakeUps.holdEnded(name, live.token()); // if this client held it
                    return Optional.of(new ForcedRelease(name, live.holder(), live.token(), live.remaining()));
                }
            }
            return Optional.empty();
        });
    }
}
