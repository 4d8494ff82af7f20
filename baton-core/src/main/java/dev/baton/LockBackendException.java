package dev.baton;

/**
 * The backend (database, server) could not be reached or refused an operation. The driver's exception is
 * the cause; the message names the backend and the operation.
 */
public class LockBackendException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String backend;

    public LockBackendException(String backend, String message, Throwable cause) {
        super(backend + ": " + message, cause);
        this.backend = backend;
    }

    /** A description of the backend, such as {@code jdbc-lease/postgresql (table baton_locks)}. */
    public String backend() {
        return backend;
    }
}
