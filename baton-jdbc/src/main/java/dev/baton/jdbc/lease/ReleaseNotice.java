package dev.baton.jdbc.lease;

import dev.baton.spi.ReleaseListener;

/**
 * The payload of a release {@code NOTIFY} on PostgreSQL: which lock was released and, when the lock's line has a
 * live waiter, which waiter is next, so that only that waiter's client wakes only that waiter.
 *
 * <p>Format: {@code <n>:<owner><name>}, where {@code <n>} is the owner's length in code points (decimal digits)
 * and {@code <owner>} the head of the line's {@link dev.baton.spi.AcquireRequest#owner()}; or {@code :<name>}
 * when no waiter is named (everyone waiting for the lock looks). A lock name may contain any character, the
 * length prefix keeps the two apart. A payload without a leading {@code [0-9]*:} is a bare name (the format of
 * Baton before the line), delivered to every waiter.
 */
public final class ReleaseNotice {
    private ReleaseNotice() {
    }

    /**
     * The SQL expression of a payload that names the earliest live waiter of lock {@code nameExpr} in line
     * {@code queue}, if any ({@code now()} by the database clock, the line's order of {@link LeaseTable#aheadSql()}).
     */
    static String namingTheHeadSql(String queue, String nameExpr) {
        return "coalesce((SELECT length(q.owner) || ':' || q.owner FROM " + queue + " q WHERE q.name = " + nameExpr
                + " AND q.expires_at > now() ORDER BY q.enqueued_at, q.owner LIMIT 1), ':') || " + nameExpr;
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
    static void deliver(String payload, ReleaseListener listener) {
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
