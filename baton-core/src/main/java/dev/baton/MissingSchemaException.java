package dev.baton;

/**
 * A table, sequence or other object the strategy needs is missing on the server (or its DDL is missing from the
 * jar). The message names the object and how to create it ({@code createTableIfMissing()} or the DDL to apply).
 */
public class MissingSchemaException extends LockConfigurationException {
    private static final long serialVersionUID = 1L;

    public MissingSchemaException(String message) {
        super(message);
    }

    public MissingSchemaException(String message, Throwable cause) {
        super(message, cause);
    }
}
