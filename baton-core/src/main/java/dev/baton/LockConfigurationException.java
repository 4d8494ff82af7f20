package dev.baton;

/**
 * The client, strategy or its server is set up in a way Baton cannot work with: retrying does not help, changing
 * the configuration (or the server) does. Thrown by a builder's {@code build()} and by the first operation that
 * finds the problem. The subtypes name the common causes; this type itself covers the rest (an option that does
 * not apply to the chosen strategy, for example).
 */
public class LockConfigurationException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockConfigurationException(String message) {
        super(message);
    }

    public LockConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
