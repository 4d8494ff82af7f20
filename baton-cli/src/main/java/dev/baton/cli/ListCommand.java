package dev.baton.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.baton.LockInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code baton list}: the locks the database knows — lease rows held or recently held, and session locks
 * held now — as a table (or JSON with {@code --json}). Never creates anything; reads a read-only SQLite file.
 */
@Command(name = "list", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, headerHeading = "%n",
        header = "List the locks: held or free, fencing token, expiry, acquisition, holder, name.",
        description = {"Times are the database server's, as ISO-8601 instants. A free lock shows holder '-'"
                + " and, as EXPIRES, when its last lease ended; a session lock shows EXPIRES 'session'.",
                "NAME comes last so that long names keep the columns aligned. Characters that a terminal would"
                + " hide or reorder (controls, bidirectional marks, zero-width and unusual spaces, a space at"
                + " either end) are shown as escapes: \\u202E, and \\\\ for a backslash. --json prints every"
                + " non-ASCII character as a JSON \\u escape.",
                "Nothing is created: a missing table is an error (exit 66). A read-only SQLite file is enough."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:listed", "64:bad arguments or URL", "66:no lock table (or SQLite file) there",
                "69:database unreachable",
                "77:server refused (credentials, unknown database or ZooKeeper chroot, permission)"})
final class ListCommand implements Callable<Integer> {
    static final List<String> HEADER = List.of("STATE", "TOKEN", "EXPIRES", "ACQUIRED", "HOLDER", "NAME");

    @Spec
    CommandSpec spec;

    @Mixin
    DatabaseOptions database;

    @Option(names = "--json", description = "Print a JSON array: name, state (held|free), strategy"
            + " (lease|session), holder, token, acquiredAt, expiresAt (null where unknown).")
    boolean json;

    /** One lock as {@code --json} prints it. */
    record Entry(String name, String state, String strategy, String holder, Long token, String acquiredAt,
                 String expiresAt) {
        static Entry of(LockInfo info) {
            boolean session = info.expiresAt() == null;
            return new Entry(info.name(), info.held() ? "held" : "free", session ? "session" : "lease",
                    info.held() ? info.holder() : null, info.fencingToken() < 0 ? null : info.fencingToken(),
                    info.acquiredAt() == null ? null : info.acquiredAt().toString(),
                    info.expiresAt() == null ? null : info.expiresAt().toString());
        }
    }

    @Override
    public Integer call() {
        List<LockInfo> locks = locks(database);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            printJson(locks, out);
        } else {
            print(locks, out);
        }
        return ExitCodes.OK;
    }

    /** Every lease row, then every session lock held now. */
    static List<LockInfo> locks(DatabaseOptions database) {
        DatabaseUrl url = database.resolveUrl();
        List<LockInfo> locks;
        try (DatabaseOptions.OpenClient open = database.connectExisting(url, Database.Access.READ)) {
            locks = new ArrayList<>(open.client().list());
        }
        // session locks live in the server's lock tables, not in rows: ask a session client for them
        Optional<DatabaseOptions.OpenClient> session = database.connectSessionIfPresent(url);
        if (session.isPresent()) {
            try (DatabaseOptions.OpenClient open = session.get()) {
                locks.addAll(open.client().list());
            }
        }
        return locks;
    }

    static void printJson(List<LockInfo> locks, PrintWriter out) {
        JsonMapper mapper = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
        try {
            out.println(mapper.writerWithDefaultPrettyPrinter()
                    .writeValueAsString(locks.stream().map(Entry::of).toList()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the list as JSON", e);
        }
        out.flush();
    }

    /** Prints the table: columns padded to their widest cell, separated by two spaces; NAME last, unpadded. */
    static void print(List<LockInfo> locks, PrintWriter out) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(HEADER);
        for (LockInfo info : locks) {
            rows.add(List.of(info.held() ? "held" : "free",
                    info.fencingToken() < 0 ? "-" : Long.toString(info.fencingToken()),
                    info.expiresAt() == null ? "session" : info.expiresAt().toString(),
                    info.acquiredAt() == null ? "-" : info.acquiredAt().toString(),
                    info.held() && info.holder() != null ? Names.escape(info.holder()) : "-",
                    Names.escape(info.name())));
        }
        int[] widths = new int[HEADER.size()];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).codePointCount(0, row.get(i).length()));
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                String cell = row.get(i);
                line.append(cell);
                if (i < row.size() - 1) {
                    line.append(" ".repeat(widths[i] - cell.codePointCount(0, cell.length()) + 2));
                }
            }
            out.println(line);
        }
        out.flush();
    }
}
