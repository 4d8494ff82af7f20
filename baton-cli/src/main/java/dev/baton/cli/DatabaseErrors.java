package dev.baton.cli;

import dev.baton.LockBackendException;
import dev.baton.internal.Durations;
import dev.baton.spi.Causes;
import org.apache.zookeeper.KeeperException;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * Turns a database failure into one line and an exit status that says which kind it was:
 * <ul>
 *   <li>{@value ExitCodes#UNAVAILABLE} <b>unreachable</b>: no connection (refused, timed out, unknown host, no
 *       route), or a SQLite file that cannot be opened;</li>
 *   <li>{@value ExitCodes#REFUSED} <b>refused</b>: the server answered and said no — credentials (SQL state
 *       class 28), an unknown database (PostgreSQL 3D000, MariaDB/MySQL 1049), missing privileges
 *       (PostgreSQL 42501, MariaDB/MySQL 1044/1142), Redis {@code NOAUTH}/{@code WRONGPASS}/{@code NOPERM}, a
 *       ZooKeeper ACL ({@code NoAuth}), a SQLite file without permission or read-only;</li>
 *   <li>{@value ExitCodes#UNAVAILABLE} otherwise, as a database error.</li>
 * </ul>
 * Messages name the database (the SQLite file, or the URL with its password hidden), and every password of
 * the URL is removed from the driver's text.
 */
final class DatabaseErrors {
    /** What baton-redis's message of a failed connect says before its reason. */
    private static final String SENTINEL_CONNECT = "cannot connect to Redis: ";
    private static final int SQLITE_PERM = 3;
    /** SQLite's primary result code for a file locked by another connection. */
    static final int SQLITE_BUSY = 5;
    private static final int SQLITE_READONLY = 8;
    private static final int SQLITE_CANTOPEN = 14;
    private static final int SQLITE_NOTADB = 26;

    private DatabaseErrors() {
    }

    /** The failure for {@code e}, which happened while talking to {@code url}. */
    static BatonFailure failure(DatabaseUrl url, Throwable e) {
        String db = url.describe();
        SQLException sql = Causes.find(e, SQLException.class).orElse(null);
        String driver = url.scrub(BatonCommand.oneLine(sql != null ? sql.getMessage() : deepestMessage(e)));
        if (url.kind() == DatabaseUrl.Kind.SQLITE && sql != null) {
            return sqlite(url, sql, driver, e);
        }
        if (url.kind() == DatabaseUrl.Kind.ZOOKEEPER && driver.contains("cannot connect to ZooKeeper")) {
            return new BatonFailure(ExitCodes.UNAVAILABLE, "cannot reach " + db + " (unreachable): " + driver, e);
        }
        if (url.kind() == DatabaseUrl.Kind.ZOOKEEPER
                && Causes.find(e, KeeperException.NoAuthException.class).isPresent()) {
            return new BatonFailure(ExitCodes.REFUSED, db + " refused access (permission): a znode's ACL does not let"
                    + " this unauthenticated client do what the command needs (Baton's ZooKeeper client does not"
                    + " authenticate): " + driver, e);
        }
        if (url.kind() == DatabaseUrl.Kind.REDIS && (driver.contains("WRONGPASS") || driver.contains("NOAUTH")
                || driver.contains("NOPERM"))) {
            // a Sentinel that refused: baton-redis's sentence names it and the URL parameter to fix
            String said = Causes.find(e, LockBackendException.class).map(Throwable::getMessage)
                    .filter(m -> m.contains("Sentinel") && m.contains("authentication failed"))
                    .map(m -> m.substring(m.indexOf(SENTINEL_CONNECT) < 0 ? 0
                            : m.indexOf(SENTINEL_CONNECT) + SENTINEL_CONNECT.length()))
                    .map(m -> url.scrub(BatonCommand.oneLine(m))).orElse(driver);
            return new BatonFailure(ExitCodes.REFUSED, db + " refused the connection (credentials or permission): "
                    + said, e);
        }
        String state = sql == null || sql.getSQLState() == null ? "" : sql.getSQLState();
        int code = sql == null ? 0 : sql.getErrorCode();
        if (state.startsWith("28") || code == 1045) {
            return new BatonFailure(ExitCodes.REFUSED, db + " refused the connection (credentials): " + driver, e);
        }
        if (state.equals("3D000") || code == 1049) {
            return new BatonFailure(ExitCodes.REFUSED, db + " refused the connection (unknown database): " + driver, e);
        }
        if (state.equals("42501") || code == 1044 || code == 1142) {
            return new BatonFailure(ExitCodes.REFUSED, db + " refused access (permission): " + driver, e);
        }
        if (unreachable(e, state)) {
            return new BatonFailure(ExitCodes.UNAVAILABLE, "cannot reach " + db + " (unreachable): " + driver, e);
        }
        String what = url.scrub(BatonCommand.oneLine(e.getMessage() != null ? e.getMessage() : driver));
        return new BatonFailure(ExitCodes.UNAVAILABLE, "database error on " + db + ": " + what, e);
    }

    private static BatonFailure sqlite(DatabaseUrl url, SQLException sql, String driver, Throwable e) {
        String db = url.describe();
        Path file = url.sqliteFile().orElse(null);
        int code = sql.getErrorCode() & 0xff;
        if (code == SQLITE_READONLY) {
            return new BatonFailure(ExitCodes.REFUSED, db + " is read-only and this command writes to it: " + driver, e);
        }
        if (code == SQLITE_PERM || (code == SQLITE_CANTOPEN && file != null && Files.exists(file)
                && !Files.isReadable(file))) {
            return new BatonFailure(ExitCodes.REFUSED, db + " cannot be opened (permission): " + driver, e);
        }
        if (code == SQLITE_CANTOPEN && file != null && Files.exists(file) && (!Files.isWritable(file)
                || (file.getParent() != null && !Files.isWritable(file.getParent())))) {
            return new BatonFailure(ExitCodes.REFUSED, db + " cannot be opened for writing: it or its directory is"
                    + " read-only (" + driver + ")", e);
        }
        if (code == SQLITE_CANTOPEN) {
            String why = file != null && file.getParent() != null && !Files.isDirectory(file.getParent())
                    ? "its directory " + file.getParent() + " does not exist" : driver;
            return new BatonFailure(ExitCodes.UNAVAILABLE, "cannot open " + db + ": " + why, e);
        }
        if (code == SQLITE_NOTADB) {
            return new BatonFailure(ExitCodes.UNAVAILABLE, db + " is not an SQLite database: " + driver, e);
        }
        if (code == SQLITE_BUSY) {
            // not "for 10s": SQLite reports some lock conflicts at once, without waiting (Database#toWal)
            return new BatonFailure(ExitCodes.UNAVAILABLE, db + " is locked by another process: SQLite reported it"
                    + " busy (Baton waits up to " + Durations.format(Database.SQLITE_BUSY_TIMEOUT) + " for its lock): "
                    + driver, e);
        }
        String what = url.scrub(BatonCommand.oneLine(e.getMessage() != null ? e.getMessage() : driver));
        return new BatonFailure(ExitCodes.UNAVAILABLE, "database error on " + db + ": " + what, e);
    }

    private static boolean unreachable(Throwable e, String state) {
        if (state.startsWith("08")) {
            return true;
        }
        return Causes.any(e, t -> t instanceof ConnectException || t instanceof UnknownHostException
                || t instanceof NoRouteToHostException || t instanceof SocketTimeoutException
                || t instanceof SQLTransientConnectionException);
    }

    /** Whether {@code e} says that a table is missing: PostgreSQL 42P01, MariaDB/MySQL 1146, SQLite "no such table". */
    static boolean isMissingTable(SQLException e) {
        return "42P01".equals(e.getSQLState()) || e.getErrorCode() == 1146
                || String.valueOf(e.getMessage()).contains("no such table");
    }

    private static String deepestMessage(Throwable e) {
        String message = null;
        for (Throwable t : Causes.chain(e)) {
            if (t.getMessage() != null) {
                message = t.getMessage();
            }
        }
        return message;
    }
}
