package dev.baton.cli;

import dev.baton.LockInfo;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.Strategy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code baton list}: the locks the database knows, held or recently held, as a table with the holder
 * ({@code -} when free), the fencing token of the current or last grant, and the server's acquisition and
 * expiry instants.
 */
@Command(name = "list", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, headerHeading = "%n",
        header = "List the locks in the database: holder, fencing token, acquired, expires.",
        description = {"Times are the database server's, as ISO-8601 instants. A free lock shows holder '-'"
                + " and, as EXPIRES, when its last lease ended.",
                "The lock table is created in the database if it is missing."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:listed", "64:bad arguments", "69:database unreachable"})
final class ListCommand implements Callable<Integer> {
    static final List<String> HEADER = List.of("NAME", "HOLDER", "TOKEN", "ACQUIRED", "EXPIRES");

    @Spec
    CommandSpec spec;

    @Mixin
    DatabaseOptions database;

    @Override
    public Integer call() {
        DatabaseUrl url = database.resolveUrl();
        List<LockInfo> locks;
        Dialect dialect;
        try (DatabaseOptions.OpenClient open = database.connect(url, null)) {
            locks = new ArrayList<>(open.client().list());
            dialect = open.client().dialect();
        }
        if (dialect != Dialect.SQLITE) {
            // session locks live in the server's lock tables, not in rows: ask a session client for them
            try (DatabaseOptions.OpenClient open = database.connect(url, null, Strategy.SESSION)) {
                locks.addAll(open.client().list());
            }
        }
        print(locks, spec.commandLine().getOut());
        return ExitCodes.OK;
    }

    /** Prints the table: columns padded to their widest cell, separated by two spaces. */
    static void print(List<LockInfo> locks, PrintWriter out) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(HEADER);
        for (LockInfo info : locks) {
            rows.add(List.of(oneLine(info.name()), info.held() && info.holder() != null ? info.holder() : "-",
                    info.fencingToken() < 0 ? "-" : Long.toString(info.fencingToken()),
                    info.acquiredAt() == null ? "-" : info.acquiredAt().toString(),
                    info.expiresAt() == null ? "session" : info.expiresAt().toString()));
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

    /** Control characters in a name would break the table; show them escaped. */
    private static String oneLine(String name) {
        StringBuilder b = new StringBuilder();
        name.codePoints().forEach(cp -> {
            if (Character.isISOControl(cp)) {
                b.append(String.format("\\u%04x", cp));
            } else {
                b.appendCodePoint(cp);
            }
        });
        return b.toString();
    }
}
