package dev.baton.cli;

/**
 * The exit statuses of {@code baton} itself, from {@code sysexits.h} where one fits. {@code baton run}
 * otherwise exits with the command's own status (128 + the signal number when a signal ended it).
 */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /**
     * Bad arguments: unknown option, bad duration, empty lock name, missing command, an unsupported or malformed URL
     * (a bad port, ZooKeeper chroot, query string, credentials the backend cannot take), found before any connection.
     */
    public static final int USAGE = 64;
    /** Not held ({@code status}), or nothing released ({@code release}). */
    public static final int NOT_HELD = 1;
    /** No lock table (or no SQLite file) where a command that never creates one looked. */
    public static final int NO_TABLE = 66;
    /** The database is unreachable (no connection, or a SQLite file that cannot be opened), or failed. */
    public static final int UNAVAILABLE = 69;
    /** An unexpected internal error: a bug in baton (the message asks for a report). */
    public static final int SOFTWARE = 70;
    /** The lock was not acquired within {@code --wait}. */
    public static final int NOT_ACQUIRED = 75;
    /** The lease was lost while the command ran; the command was stopped. */
    public static final int LEASE_LOST = 76;
    /**
     * The server refused: credentials (also Redis {@code NOAUTH}, {@code WRONGPASS}), an unknown database or a
     * ZooKeeper chroot that does not exist, missing privileges (also Redis {@code NOPERM}, a ZooKeeper ACL), a
     * read-only or unreadable SQLite file ({@code EX_NOPERM}).
     */
    public static final int REFUSED = 77;
    /** The command was found but could not be started. */
    public static final int CANNOT_EXECUTE = 126;
    /** The command was not found. */
    public static final int NOT_FOUND = 127;

    private ExitCodes() {
    }
}
