package dev.baton;

/**
 * The connection pool is smaller than the strategy documents it needs (the session strategy keeps connections of
 * its own), so a healthy client could starve. The message names the pool's size and the need.
 */
public class PoolTooSmallException extends LockConfigurationException {
    private static final long serialVersionUID = 1L;

    public PoolTooSmallException(String message) {
        super(message);
    }
}
