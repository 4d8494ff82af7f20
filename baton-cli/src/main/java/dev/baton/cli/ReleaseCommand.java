package dev.baton.cli;

import dev.baton.ForcedRelease;
import dev.baton.LockInfo;
import dev.baton.LockNames;
import dev.baton.jdbc.StrategyConflictException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

/**
 * {@code baton release NAME [--token T]}: an operator's force release of a stuck lease lock. Session locks
 * are refused: they live in their holder's database session, which only its holder or the server can end.
 */
@Command(name = "release", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, headerHeading = "%n",
        header = "Force-release a stuck lease lock (with --token, only that grant).",
        description = {"Ends the grant that holds the lock now, whoever holds it, and says what it released."
                + " The holder learns at its next renewal that its lease is lost (a 'baton run' holding it then"
                + " stops its command and exits 76); it can never release or renew a later grant.",
                "Use --token (from 'baton status' or 'baton list') so that a grant made after you looked is not"
                + " released by mistake.",
                "A session lock (--strategy session) is held by its holder's database session and cannot be"
                + " released from outside it: the message names that session; stop the holder, or end the"
                + " session on the server yourself.",
                "Nothing is created; a missing table is an error."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:released", "1:nothing released: not held, held under another token, or a session lock (or a name used with --strategy session)",
                "64:bad arguments or URL", "66:no lock table (or SQLite file) there", "69:database unreachable",
                "77:server refused (credentials, unknown database or ZooKeeper chroot, permission,"
                        + " read-only SQLite file)"})
final class ReleaseCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Option(names = "--token", paramLabel = "T", description = "Release only the grant with this fencing token.")
    Long token;

    @Mixin
    DatabaseOptions database;

    @Override
    public Integer call() {
        try {
            LockNames.validate(name);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "invalid lock name: " + e.getMessage());
        }
        DatabaseUrl url = database.resolveUrl();
        String lock = "lock '" + Names.escape(name) + "'";
        Optional<ForcedRelease> released;
        try (DatabaseOptions.OpenClient open = database.connectExisting(url, Database.Access.WRITE)) {
            released = open.forceRelease(name, token == null ? OptionalLong.empty() : OptionalLong.of(token));
        } catch (StrategyConflictException e) {
            // the session strategy's claim on the name: not a lease, never released from here
            spec.commandLine().getErr().println("baton: " + sessionClaim(lock));
            return ExitCodes.NOT_HELD;
        }
        if (released.isPresent()) {
            ForcedRelease r = released.get();
            spec.commandLine().getOut().println("released " + lock + ": holder " + Names.escape(r.holder())
                    + ", token " + r.fencingToken() + ", " + (r.remaining() == null
                    ? "its member node deleted (the next in line gets the lock)"
                    : r.remaining().toMillis() + " ms of its lease were left"));
            return ExitCodes.OK;
        }
        spec.commandLine().getErr().println("baton: " + (url.kind() == DatabaseUrl.Kind.ZOOKEEPER
                ? whyNothingOnZooKeeper(lock) : whyNothing(lock)));
        return ExitCodes.NOT_HELD;
    }

    /** Why a name the session strategy claimed is not released: its holder now, if any. */
    private String sessionClaim(String lock) {
        Optional<String> session = heldSessionLock(ListCommand.locks(database));
        return session.orElseGet(() -> lock + " is used with --strategy session (its row is that strategy's claim"
                + " on the name, not a lease) and no session holds it now: nothing released");
    }

    /** "lock 'x' is a session lock held by …", if the name is a session lock held now. */
    private Optional<String> heldSessionLock(List<LockInfo> locks) {
        return locks.stream().filter(l -> l.name().equals(name) && l.held() && l.expiresAt() == null).findFirst()
                .map(l -> "lock '" + Names.escape(name) + "' is a session lock held by " + Names.escape(l.holder())
                        + "; it ends only with that database session, so it is not released from here: stop the"
                        + " holding process, or end the session on the server (PostgreSQL: SELECT"
                        + " pg_terminate_backend(pid); MariaDB/MySQL: KILL id)");
    }

    /** Why nothing was released on ZooKeeper, whose holds all end with a session: held under another token, or free. */
    private String whyNothingOnZooKeeper(String lock) {
        Optional<LockInfo> held = ListCommand.locks(database).stream().filter(l -> l.name().equals(name) && l.held())
                .findFirst();
        if (held.isPresent() && token != null && held.get().fencingToken() != token) {
            return lock + " is held under token " + held.get().fencingToken() + ", not " + token + ": nothing released";
        }
        if (held.isPresent()) {
            return lock + " changed hands while it was being released (now token " + held.get().fencingToken()
                    + "): nothing released; look again and use --token";
        }
        return lock + " is free: nothing released";
    }

    /** Why nothing was released, from a fresh look at the lock. */
    private String whyNothing(String lock) {
        List<LockInfo> locks = ListCommand.locks(database);
        Optional<String> session = heldSessionLock(locks);
        if (session.isPresent()) {
            return session.get();
        }
        Optional<LockInfo> row = locks.stream().filter(l -> l.name().equals(name) && l.expiresAt() != null)
                .findFirst();
        if (row.isPresent() && row.get().held() && token == null) {
            return lock + " changed hands while it was being released (now token " + row.get().fencingToken()
                    + "): nothing released; look again and use --token";
        }
        if (row.isPresent() && row.get().held()) {
            return lock + " is held under token " + row.get().fencingToken() + ", not " + token
                    + ": nothing released";
        }
        return StatusCommand.describe(name, row) + ": nothing released";
    }
}
