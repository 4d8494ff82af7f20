package dev.baton.cli;

import dev.baton.internal.Durations;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.concurrent.Callable;

/** {@code baton purge --older-than D}: deletes lease rows whose lease ended more than D ago. */
@Command(name = "purge", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, headerHeading = "%n",
        header = "Delete the rows of locks whose lease ended more than --older-than ago.",
        description = {"A held lock never matches: its lease has not ended. Fencing tokens keep increasing after"
                + " a purge (they come from a sequence or counter, not the row); purge rows that ended long ago"
                + " (an hour, not seconds): see 'Purge and tokens' in docs/LEASE.md.",
                "Durations: 500ms, 10s, 1.5s, 2m, 1h, 1h30m. Nothing is created; a missing table is an error."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:purged (the number of rows is printed, 0 included)", "64:bad arguments or URL",
                "66:no lock table (or SQLite file) there", "69:database unreachable",
                "77:server refused (credentials, unknown database or ZooKeeper chroot, permission,"
                        + " read-only SQLite file)"})
final class PurgeCommand implements Callable<Integer> {
    static final Duration MIN_AGE = Duration.ofSeconds(1);
    /** The library's bound (3650 days), said here in the CLI's duration words rather than its Java ones. */
    static final Duration MAX_AGE = Duration.ofDays(3650);

    @Spec
    CommandSpec spec;

    @Option(names = "--older-than", required = true, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long ago a lease must have ended (at least 1s, at most 87600h).")
    Duration olderThan;

    @Mixin
    DatabaseOptions database;

    @Override
    public Integer call() {
        if (olderThan.compareTo(MIN_AGE) < 0) {
            throw new ParameterException(spec.commandLine(), "--older-than must be at least 1s, was "
                    + Durations.format(olderThan));
        }
        try {
            Durations.requireAtMost("--older-than", olderThan, MAX_AGE, "a row that ended that long ago is long"
                    + " purgeable");
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        DatabaseUrl url = database.resolveUrl();
        int purged;
        try (DatabaseOptions.OpenClient open = database.connectExisting(url, Database.Access.WRITE)) {
            purged = open.purgeExpired(olderThan, url);
        }
        spec.commandLine().getOut().println("purged " + purged + (purged == 1 ? " row" : " rows") + " of locks"
                + " whose lease ended more than " + Durations.format(olderThan) + " ago from table "
                + database.tableName() + " in " + url.describe());
        return ExitCodes.OK;
    }
}
