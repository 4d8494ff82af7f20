package dev.baton.checker;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A worker's history: one JSON object per line, each written with its own {@code write} call as soon as it
 * happens, so a {@code kill -9} loses nothing that was logged (the bytes are in the kernel's page cache).
 * Times are {@link System#nanoTime()}, comparable across processes on one host within one boot.
 */
final class EventLog implements AutoCloseable {
    private final FileOutputStream out;

    EventLog(Path file) {
        try {
            this.out = new FileOutputStream(file.toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open event log " + file, e);
        }
    }

    /** Writes one event: alternating keys and values, {@code t} (nanoTime) added first. */
    synchronized void log(Object... keysAndValues) {
        Object[] all = new Object[keysAndValues.length + 2];
        all[0] = "t";
        all[1] = System.nanoTime();
        System.arraycopy(keysAndValues, 0, all, 2, keysAndValues.length);
        byte[] line = (Json.object(all) + "\n").getBytes(StandardCharsets.UTF_8);
        try {
            out.write(line);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write event log", e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException ignored) {
            // the process is ending
        }
    }
}
