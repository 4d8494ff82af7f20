package dev.baton;

/**
 * An acquire failed in a way that proves the backend granted nothing: the request was never sent (the connection
 * was down), or the server refused it before any write (a read-only replica, a server out of memory). Unlike a
 * {@link LockBackendException} whose outcome is unknown (a timeout, a connection dropped while the request was in
 * flight), trying again cannot leave two grants, so {@code acquire(maxWait)} and {@code acquire()} keep trying (with
 * their backoff) until their deadline and throw this only if the last try before it failed so; {@code tryAcquire()}
 * throws it at once.
 */
public class NothingGrantedException extends LockBackendException {
    private static final long serialVersionUID = 1L;

    public NothingGrantedException(String backend, String message, Throwable cause) {
        super(backend, message, cause);
    }
}
