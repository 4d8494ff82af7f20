package dev.baton;

/**
 * Root of every exception Baton throws for a lock operation. Unchecked: a lock that cannot be had or
 * kept is a condition the caller handles where it makes sense, not at every call site.
 */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LockException(String message) {
        super(message);
    }

    public LockException(String message, Throwable cause) {
        super(message, cause);
    }
}
