package dev.baton.cli;

import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code baton completion}: prints the bash (and zsh) completion script that picocli generates. */
@Command(name = "completion", usageHelpAutoWidth = true, headerHeading = "%n", mixinStandardHelpOptions = true,
        header = "Print a bash/zsh completion script for baton.",
        description = {"Load it in the current shell:   source <(baton completion)",
                "or install it:   baton completion > /etc/bash_completion.d/baton"})
final class CompletionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().getOut().print(AutoComplete.bash("baton", spec.root().commandLine()));
        spec.commandLine().getOut().flush();
        return ExitCodes.OK;
    }
}
