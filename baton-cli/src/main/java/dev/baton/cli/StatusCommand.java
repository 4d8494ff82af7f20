package dev.baton.cli;

import dev.baton.LockInfo;
import dev.baton.LockNames;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code baton status NAME}: one line about one lock, then one line per place in its line; exit 0 if it is held, 2
 * if it is free but kept for the head of its line, 1 if it is free.
 */
@Command(name = "status", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, headerHeading = "%n",
        header = "Say whether a lock is held: holder, fencing token, lease end, and who waits in line."
                + " Exit 0 held, 2 kept for a waiter, 1 free.",
        description = {"Looks at the lease row and its line of waiters and, on PostgreSQL and MariaDB/MySQL, at the"
                + " session locks held now. Times are the database server's. Nothing is created; a read-only SQLite"
                + " file is enough.",
                "Each place in line is one more line, first first: the waiter, since when it waits, and until when"
                + " its place lives unless its client's heartbeat renews it (about a second ahead); a place whose"
                + " heartbeat stopped is shown 'dead' (its waiter died; it counts for nothing and the backend"
                + " deletes it). A lock that is free but kept for the first live waiter says so: only that waiter"
                + " can take it ('baton run' of anyone else waits, or exits 75); it does within a moment, or its"
                + " place dies within about a second. 'baton release NAME --waiter OWNER' removes a place."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:held", "1:free (never taken, released, or its lease ran out) and nobody live waits",
                "2:free, but kept for the head of its line (nobody else can take it)",
                "64:bad arguments or URL", "66:no lock table (or SQLite file) there", "69:database unreachable",
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
        Optional<LockInfo> info = find(ListCommand.locks(database), name);
        PrintWriter out = spec.commandLine().getOut();
        out.println(describe(name, info));
        info.ifPresent(i -> line(i).forEach(out::println));
        out.flush();
        if (info.isPresent() && info.get().held()) {
            return ExitCodes.OK;
        }
        return info.flatMap(LockInfo::keptFor).isPresent() ? ExitCodes.KEPT_FOR_WAITER : ExitCodes.NOT_HELD;
    }

    /** The lock as the listing shows it: its holder if held (a lease or a session lock), else its lease row or line. */
    static Optional<LockInfo> find(List<LockInfo> locks, String name) {
        Optional<LockInfo> held = locks.stream().filter(l -> l.name().equals(name) && l.held()).findFirst();
        return held.or(() -> locks.stream().filter(l -> l.name().equals(name) && !ListCommand.isSession(l))
                .findFirst());
    }

    /**
     * "lock 'x' is held by H (token 7), lease ends 2026-…Z unless renewed", "… is free (last grant: …)", "… is free,
     * kept for the head of its line: W (last grant: …)".
     */
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
        String last = l.expiresAt() == null ? "no grant on record"
                : "last grant: token " + l.fencingToken() + ", ended " + l.expiresAt();
        Optional<LockInfo.Waiter> kept = l.keptFor();
        if (kept.isPresent()) {
            return lock + " is free, kept for the head of its line: " + Names.escape(kept.get().owner()) + " ("
                    + last + ")";
        }
        return lock + " is free (" + last + ")";
    }

    /** "  1. W waiting since S, alive until U", or "…, dead since U", one per place, first first. */
    static List<String> line(LockInfo info) {
        List<String> lines = new ArrayList<>();
        int place = 1;
        for (LockInfo.Waiter w : info.line()) {
            lines.add("  " + place++ + ". " + Names.escape(w.owner()) + " waiting since " + w.since()
                    + (w.alive() ? ", alive until " + w.aliveUntil()
                    : ", dead since " + w.aliveUntil() + " (its heartbeat stopped; it counts for nothing)"));
        }
        return lines;
    }
}
