package dev.baton.cli;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.logging.LogManager;

/**
 * The configuration of {@code java.util.logging} when {@code baton} logs nothing: the root logger off, no handler.
 * {@link BatonCommand#configureLogging} names it in {@code java.util.logging.config.class}, so the
 * {@link LogManager} instantiates it in place of reading the JDK's {@code logging.properties}, and only if
 * something (pgjdbc, the JDK) uses {@code java.util.logging} at all: setting the root logger's level at start-up
 * would set up the whole {@link LogManager} on every call, tens of milliseconds, for calls that never log through
 * it (SQLite, Redis, ZooKeeper).
 */
public final class QuietLogging {
    /** Called by the {@link LogManager} as it reads its initial configuration. */
    public QuietLogging() throws IOException {
        LogManager.getLogManager().readConfiguration(
                new ByteArrayInputStream(".level=OFF\n".getBytes(StandardCharsets.ISO_8859_1)));
    }
}
