package dev.baton.jdbc;

import dev.baton.LockException;

/**
 * A lock name refused because another strategy uses it in the same table: one name is one lock, so the
 * lease strategy refuses a name the session strategy has claimed, and the session strategy a name that has a
 * lease row. Not transient: the claim stays until the name is no longer used with the other strategy and its
 * row is deleted (the message says how).
 */
public final class StrategyConflictException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final String table;
    private final Strategy usedWith;

    /**
     * @param lockName the refused name
     * @param table    the lock table
     * @param usedWith the strategy the name is used with
     * @param message  the whole message, saying how to resolve the conflict
     */
    public StrategyConflictException(String lockName, String table, Strategy usedWith, String message) {
        super(message);
        this.lockName = lockName;
        this.table = table;
        this.usedWith = usedWith;
    }

    /** The refused name. */
    public String lockName() {
        return lockName;
    }

    /** The lock table whose row shows the other strategy's use. */
    public String table() {
        return table;
    }

    /** The strategy the name is used with (not the one that was refused). */
    public Strategy usedWith() {
        return usedWith;
    }
}
