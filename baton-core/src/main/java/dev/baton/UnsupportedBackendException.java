package dev.baton;

/**
 * The server, its version, or the way the client reaches it (a transaction-mode pooler for a strategy that needs
 * its own server session) does not support the chosen strategy. The message names what is needed.
 */
public class UnsupportedBackendException extends LockConfigurationException {
    private static final long serialVersionUID = 1L;

    public UnsupportedBackendException(String message) {
        super(message);
    }

    public UnsupportedBackendException(String message, Throwable cause) {
        super(message, cause);
    }
}
