package dev.baton.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;

/**
 * Capability of a backend whose renewal tells how long each grant still had on the server, by the server's clock,
 * just before the renewal extended it. The core compares that with what it counted on: a grant that had less time
 * left than until the lease's local deadline means the server's clock jumped forward (or the grant's expiry was
 * changed on the server), so the local validity was wrong. The core then reports the lease lost at once, rather
 * than trusting its deadline (which would have let it believe in a grant the server may already have ended).
 */
public interface ReportsTimeLeft extends LockBackend {

    /**
     * As {@link #renew}, and reports the time each renewed grant had left.
     *
     * @return every renewed grant with the time it had left before this renewal, by the server's clock (a grant
     *         that had no expiry on the server maps to the lease time: nothing to report); any other given grant is
     *         no longer held
     * @throws dev.baton.LockBackendException if the server cannot be reached
     */
    Map<LeaseKey, Duration> renewReportingTimeLeft(Collection<LeaseKey> leases, Duration leaseTime);
}
