package dev.baton.spi;

/**
 * Identifies one grant on the server: release and renewal act only where all three match, so a holder
 * whose lease ran out can never release or extend the grant of the holder that took over.
 */
public record LeaseKey(String name, String owner, long token) {
}
