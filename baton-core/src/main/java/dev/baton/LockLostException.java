package dev.baton;

/**
 * A lease this process held is no longer valid: its renewal failed until its conservative deadline passed,
 * another holder took the lock over after the lease ran out on the server, or the client was closed. Work
 * protected by the lease must stop; the fencing token lets the protected resource refuse a late writer.
 */
public class LockLostException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final long fencingToken;

    public LockLostException(String lockName, long fencingToken, String message) {
        super(message);
        this.lockName = lockName;
        this.fencingToken = fencingToken;
    }

    public LockLostException(String lockName, long fencingToken, String message, Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
        this.fencingToken = fencingToken;
    }

    /** The name of the lock whose lease was lost. */
    public String lockName() {
        return lockName;
    }

    /** The fencing token of the lost lease. */
    public long fencingToken() {
        return fencingToken;
    }
}
