package dev.baton.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import java.util.concurrent.Callable;

/**
 * The version of this build: the Maven project version, written into {@code dev/baton/cli/version.properties}
 * by resource filtering (the one source; nothing else in the CLI spells the version). {@code baton version}
 * and {@code baton --version} print it.
 */
@Command(name = "version", usageHelpAutoWidth = true, headerHeading = "%n", mixinStandardHelpOptions = true,
        header = "Print baton's version.")
final class Version implements Callable<Integer>, IVersionProvider {
    static final String RESOURCE = "/dev/baton/cli/version.properties";

    @Spec
    CommandSpec spec;

    /** The project version, such as {@code 0.1.0-SNAPSHOT}. */
    static String current() {
        try (InputStream in = Version.class.getResourceAsStream(RESOURCE)) {
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

    @Override
    public String[] getVersion() {
        return new String[] {"baton " + current()};
    }

    @Override
    public Integer call() {
        spec.commandLine().getOut().println(getVersion()[0]);
        return ExitCodes.OK;
    }
}
