package dev.baton;

/** The dialect set on the builder is not the database the connections reach. The message names both. */
public class DialectMismatchException extends LockConfigurationException {
    private static final long serialVersionUID = 1L;

    public DialectMismatchException(String message) {
        super(message);
    }
}
