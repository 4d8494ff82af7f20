package dev.baton.internal;

import dev.baton.Lease;

import java.util.OptionalLong;

/**
 * The conservative local deadline of a lease, for Baton's own tools ({@code baton run} compares it with the moment
 * its command ended). Not part of the API: the package is not exported.
 */
public final class LeaseDeadlines {
    private LeaseDeadlines() {
    }

    /**
     * The lease's conservative local deadline, on the client's ticker ({@code System.nanoTime()} unless the builder
     * was given another): the time the last grant or renewal the server confirmed was sent, plus the lease time less
     * the drift margin. It only grows, and only by a renewal the server confirmed; a lost lease keeps the last one.
     * Until then the server showed the grant.
     *
     * @return the deadline, or empty if the lease does not come from this core
     */
    public static OptionalLong deadlineNanos(Lease lease) {
        return lease instanceof LeaseHandle handle ? OptionalLong.of(handle.hold().deadlineNanos())
                : OptionalLong.empty();
    }
}
