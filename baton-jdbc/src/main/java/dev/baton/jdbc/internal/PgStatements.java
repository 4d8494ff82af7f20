package dev.baton.jdbc.internal;

import org.postgresql.PGConnection;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * PostgreSQL statements without named server-side prepared statements. pgjdbc prepares a statement on the
 * server by name ({@code S_1}, {@code S_2}, …) once the same SQL has run {@code prepareThreshold} times (5 by
 * default) on a connection; behind a pooler in transaction mode (PgBouncer {@code pool_mode=transaction}) the
 * next use lands on another server connection, which lacks that name or already has another client's
 * ({@code prepared statement "S_3" already exists}, 42P05). A threshold of 0 makes every statement one-shot
 * (unnamed), which works through any pooler whatever the URL says; each execution is then parsed and
 * planned again, a cost too small to see next to a round trip for Baton's short statements.
 *
 * <p>Only loaded on PostgreSQL: the driver is an optional dependency.
 */
final class PgStatements {
    private PgStatements() {
    }

    /** Makes statements created on {@code c} from now on one-shot; returns the threshold to restore. */
    static int oneShot(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        int previous = pg.getPrepareThreshold();
        if (previous != 0) {
            pg.setPrepareThreshold(0);
        }
        return previous;
    }

    /** Puts back the threshold {@link #oneShot} returned, before the connection goes back to its pool. */
    static void restore(Connection c, int previous) throws SQLException {
        if (previous != 0) {
            c.unwrap(PGConnection.class).setPrepareThreshold(previous);
        }
    }
}
