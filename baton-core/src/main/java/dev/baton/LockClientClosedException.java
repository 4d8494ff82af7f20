package dev.baton;

/** The lock client (or the view of it an operation used) was closed; open a new client. */
public class LockClientClosedException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockClientClosedException(String message) {
        super(message);
    }
}
