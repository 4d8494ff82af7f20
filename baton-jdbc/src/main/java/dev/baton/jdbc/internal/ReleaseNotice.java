package dev.baton.jdbc.internal;

import dev.baton.spi.ReleaseListener;

/**
 * The payload of a release {@code NOTIFY} on PostgreSQL: which lock was released and, when the lock's line has a
 * live waiter, which waiter is next, so that only that waiter's client wakes only that waiter.
 *
 * <p>Format: {@code <n>:<owner><name>}, where {@code <n>} is the owner's length in code points (decimal digits)
 * and {@code <owner>} the head of the line's {@link dev.baton.spi.AcquireRequest#owner()}; or {@code :<name>}
 * when no waiter is named (everyone waiting for the lock looks: the read-write and run-once tables' notices). A
 * plain lease's release whose line is empty sends no notice at all. A lock name may contain any character, the
 * length prefix keeps the two apart. A payload without a leading {@code [0-9]*:} is a bare name (the format of
 * Baton before the line), delivered to every waiter.
 */
public final class ReleaseNotice {
    private ReleaseNotice() {
    }

    /**
     * The SQL of a query that, for each row of {@code released} (a relation with a {@code name} column: the locks a
     * statement just freed), sends a notice on channel {@code ?} naming the earliest live waiter in line
     * {@code queue} ({@code now()} by the database clock, the line's order of {@link dev.baton.jdbc.lease.LeaseTable#aheadSql()}), and
     * sends nothing when the line has no live waiter: then nobody in another client waits for a notice (a waiter
     * takes its ticket before it waits, and looks after taking it). One row per released row either way.
     */
    public static String notifyTheHeadSql(String queue, String released) {
        return "SELECT CASE WHEN h.owner IS NOT NULL THEN pg_notify(?, length(h.owner) || ':' || h.owner || r.name)"
                + " END FROM " + released + " r LEFT JOIN LATERAL (SELECT q.owner FROM " + queue + " q"
                + " WHERE q.name = r.name AND q.expires_at > now() ORDER BY q.enqueued_at, q.owner LIMIT 1) h ON true";
    }

    /** The SQL expression of a payload that wakes every waiter of lock {@code nameExpr}. */
    public static String toEveryoneSql(String nameExpr) {
        return "':' || " + nameExpr;
    }

    /** A payload that wakes every waiter of {@code name}. */
    public static String toEveryone(String name) {
        return ":" + name;
    }

    /** Hands {@code payload} to {@code listener}: the named waiter, or every waiter of the lock. */
    public static void deliver(String payload, ReleaseListener listener) {
        int colon = payload.indexOf(':');
        int digits = 0;
        while (digits < colon && Character.isDigit(payload.charAt(digits)) && payload.charAt(digits) < 128) {
            digits++;
        }
        if (colon < 0 || digits != colon) {
            listener.released(payload); // a bare name
            return;
        }
        if (colon == 0) {
            listener.released(payload.substring(1));
            return;
        }
        int ownerStart = colon + 1;
        int ownerEnd;
        try {
            ownerEnd = payload.offsetByCodePoints(ownerStart, Integer.parseInt(payload.substring(0, colon)));
        } catch (IndexOutOfBoundsException | NumberFormatException e) {
            listener.released(payload); // not ours: wake everyone rather than no one
            return;
        }
        listener.released(payload.substring(ownerEnd), payload.substring(ownerStart, ownerEnd));
    }
}
