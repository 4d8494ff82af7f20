package dev.baton;

/**
 * The thread was interrupted while waiting for a lock. The thread's interrupt flag is set again before this
 * is thrown, so code further up still sees the interruption.
 */
public class LockInterruptedException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String lockName;

    public LockInterruptedException(String lockName, String message) {
        super(message);
        this.lockName = lockName;
    }

    /** The name of the lock the thread was waiting for. */
    public String lockName() {
        return lockName;
    }
}
