package dev.baton.cli;

import dev.baton.LockInfo;
import dev.baton.LockNames;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/** {@code baton status NAME}: one line about one lock; exit 0 if it is held, 1 if it is free. */
@Command(name = "status", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, headerHeading = "%n",
        header = "Say whether a lock is held: holder, fencing token, lease end. Exit 0 held, 1 free.",
        description = {"Looks at the lease row and, on PostgreSQL and MariaDB/MySQL, at the session locks held"
                + " now. Times are the database server's. Nothing is created; a read-only SQLite file is enough."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:held", "1:free (never taken, released, or its lease ran out)", "64:bad arguments or URL",
                "66:no lock table (or SQLite file) there", "69:database unreachable",
                "77:server refused (credentials, unknown database or ZooKeeper chroot, permission)"})
final class StatusCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Mixin
    DatabaseOptions database;

    @Override
    public Integer call() {
        try {
            LockNames.validate(name);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "invalid lock name: " + e.getMessage());
        }
        List<LockInfo> locks = ListCommand.locks(database);
        Optional<LockInfo> held = locks.stream().filter(l -> l.name().equals(name) && l.held()).findFirst();
        Optional<LockInfo> row = locks.stream().filter(l -> l.name().equals(name) && l.expiresAt() != null)
                .findFirst();
        spec.commandLine().getOut().println(describe(name, held.or(() -> row)));
        return held.isPresent() ? ExitCodes.OK : ExitCodes.NOT_HELD;
    }

    /** "lock 'x' is held by H (token 7), lease ends 2026-…Z", "… is free …". */
    static String describe(String name, Optional<LockInfo> info) {
        String lock = "lock '" + Names.escape(name) + "'";
        if (info.isEmpty()) {
            return lock + " is free (no row: never taken, or purged)";
        }
        LockInfo l = info.get();
        if (l.held() && l.expiresAt() == null) {
            return lock + " is held by " + Names.escape(l.holder()) + " (session lock: held until that"
                    + " server session ends)";
        }
        if (l.held()) {
            return lock + " is held by " + Names.escape(l.holder()) + " (token " + l.fencingToken()
                    + "), lease ends " + l.expiresAt() + " unless renewed";
        }
        return lock + " is free (last grant: token " + l.fencingToken() + ", ended " + l.expiresAt() + ")";
    }
}
