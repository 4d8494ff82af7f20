package dev.baton.jdbc.internal;

import java.sql.SQLException;
import java.sql.Statement;

/**
 * The token counters of SQLite and of the MySQL dialect: a table {@code <table>_token} whose one row (id 1) each grant
 * bumps in its own transaction. Its row must be there: an update that finds none would leave the token the grant
 * reads at 0, or at what {@code LAST_INSERT_ID()} held before, for every later holder, and equal tokens let a stale
 * holder's write through a fence. {@code build()} puts a missing row back; a row deleted while clients run fails
 * their grants here, with a sentence, until a client is built again.
 */
public final class TokenCounters {
    private TokenCounters() {
    }

    /**
     * Runs {@code bumpSql} (an {@code UPDATE} of {@code counterTable}'s row id 1) and checks that it found the row.
     *
     * @throws SQLException naming the table if the row is missing
     */
    public static void bump(Statement st, String counterTable, String bumpSql) throws SQLException {
        if (st.executeUpdate(bumpSql) != 1) {
            throw new SQLException("the token counter " + counterTable + " has no row (id 1): no fencing token can be"
                    + " drawn; building a lock client on this table again puts the row back");
        }
    }
}
