package dev.baton.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The version of this build, the one source every tool reads ({@code baton version}, {@code baton --version},
 * {@code baton check --version}): the Maven project version, written into
 * {@code dev/baton/internal/baton-version.properties} by resource filtering (only that file is filtered). Kept
 * here, beside {@link Durations}, for the CLI and the checker alike; not part of the library's API.
 */
public final class BatonVersion {
    static final String RESOURCE = "/dev/baton/internal/baton-version.properties";

    private BatonVersion() {
    }

    /**
     * The project version, such as {@code 0.1.0-SNAPSHOT}.
     *
     * @throws IllegalStateException if the build did not write it
     */
    public static String current() {
        try (InputStream in = BatonVersion.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the build");
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version");
            if (v == null || v.isBlank() || v.contains("${")) {
                throw new IllegalStateException(RESOURCE + " was not filtered by the build: version=" + v);
            }
            return v;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
