package dev.baton.jdbc.internal;

import dev.baton.spi.LeaseKey;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/** Lease keys listed as {@code OR} terms of a statement, for the dialects (and tables) that cannot take arrays. */
public final class LeaseKeys {
    private LeaseKeys() {
    }

    /** Binds name, owner and token of each key, in order, from parameter {@code first}: see {@link #predicate}. */
    public static void bind(PreparedStatement ps, int first, List<LeaseKey> keys) throws SQLException {
        int i = first;
        for (LeaseKey k : keys) {
            ps.setString(i++, k.name());
            ps.setString(i++, k.owner());
            ps.setLong(i++, k.token());
        }
    }

    /** {@code (name = ? AND owner = ? AND token = ?) OR …} for n keys. */
    public static String predicate(int n) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                sb.append(" OR ");
            }
            sb.append("(name = ? AND owner = ? AND token = ?)");
        }
        return sb.append(')').toString();
    }
}
