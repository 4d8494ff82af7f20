package dev.baton.cli;

/**
 * A failure the command reports as one line on standard error and an exit status, such as an unknown URL
 * scheme (64) or an unreachable database (69).
 */
final class BatonFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int exitCode;

    BatonFailure(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
