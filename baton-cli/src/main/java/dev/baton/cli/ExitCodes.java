package dev.baton.cli;

/**
 * The exit statuses of {@code baton} itself, from {@code sysexits.h} where one fits. {@code baton run}
 * otherwise exits with the command's own status (128 + the signal number when a signal ended it).
 */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /** Bad arguments: unknown option, bad duration, empty lock name, missing command, unknown URL. */
    public static final int USAGE = 64;
    /** The database could not be reached or refused the lock table. */
    public static final int UNAVAILABLE = 69;
    /** An unexpected internal error. */
    public static final int SOFTWARE = 70;
    /** The lock was not acquired within {@code --wait}. */
    public static final int NOT_ACQUIRED = 75;
    /** The lease was lost while the command ran; the command was stopped. */
    public static final int LEASE_LOST = 76;
    /** The command was found but could not be started. */
    public static final int CANNOT_EXECUTE = 126;
    /** The command was not found. */
    public static final int NOT_FOUND = 127;

    private ExitCodes() {
    }
}
