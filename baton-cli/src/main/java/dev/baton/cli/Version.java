package dev.baton.cli;

import dev.baton.internal.BatonVersion;

import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/**
 * The version of this build: the Maven project version, read by {@link BatonVersion} (the one source;
 * nothing else spells the version). {@code baton version}
 * and {@code baton --version} print it.
 */
@Command(name = "version", usageHelpAutoWidth = true, headerHeading = "%n", mixinStandardHelpOptions = true,
        header = "Print baton's version.")
final class Version implements Callable<Integer>, IVersionProvider {
    @Spec
    CommandSpec spec;

    /** The project version, such as {@code 0.1.0-SNAPSHOT}: {@link BatonVersion#current()}. */
    static String current() {
        return BatonVersion.current();
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
