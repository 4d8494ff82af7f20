package dev.baton.checker;

import dev.baton.LockBackendException;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockBackend;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A deliberately broken lease backend on the checker's PostgreSQL table, for positive controls: the same SQL
 * as the real strategy with one safeguard removed. Test code only.
 */
final class BrokenPostgresBackend implements LockBackend {
    /** Which safeguard is missing. */
    enum Defect {
        /** release matches the name only, so a holder whose lease ran out releases its successor's grant */
        RELEASE_WITHOUT_OWNER_CHECK,
        /** acquire takes the row whether or not its lease has expired */
        ACQUIRE_WITHOUT_EXPIRY
    }

    private final DataSource ds;
    private final String table;
    private final Defect defect;

    BrokenPostgresBackend(DataSource ds, String table, Defect defect) {
        this.ds = ds;
        this.table = table;
        this.defect = defect;
    }

    private interface Call<T> {
        T run(Connection c) throws SQLException;
    }

    private <T> T run(Call<T> call) {
        try (Connection c = ds.getConnection()) {
            return call.run(c);
        } catch (SQLException e) {
            throw new LockBackendException(description(), e.getMessage(), e);
        }
    }

    @Override
    public String description() {
        return "broken-lease/postgresql (" + defect + ", table " + table + ")";
    }

    @Override
    public void start(String clientId) {
    }

    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        String name = request.name();
        String owner = request.owner();
        Duration leaseTime = request.leaseTime();
        String take = defect == Defect.ACQUIRE_WITHOUT_EXPIRY ? "" : " WHERE t.expires_at <= now()";
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " AS t (name, owner, token, acquired_at,"
                    + " expires_at) VALUES (?, ?, nextval('" + table + "_token_seq'), now(), now() + make_interval(secs => ?))"
                    + " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, token = nextval('" + table + "_token_seq'),"
                    + " acquired_at = now(), expires_at = excluded.expires_at" + take + " RETURNING t.token")) {
                ps.setString(1, name);
                ps.setString(2, owner);
                ps.setDouble(3, leaseTime.toMillis() / 1000.0);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return new AcquireResult.Granted(rs.getLong(1));
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT owner, token,"
                    + " greatest(0, ceil(extract(epoch FROM (expires_at - now())) * 1000))::bigint FROM " + table
                    + " WHERE name = ?")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? new AcquireResult.Busy(rs.getString(1), rs.getLong(2), Duration.ofMillis(rs.getLong(3)))
                            : new AcquireResult.Busy(null, -1, null);
                }
            }
        });
    }

    @Override
    public boolean release(LeaseKey lease) {
        String match = defect == Defect.RELEASE_WITHOUT_OWNER_CHECK ? "name = ?" : "name = ? AND owner = ? AND token = ?";
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
                    + " SET owner = NULL, expires_at = LEAST(expires_at, now()) WHERE " + match)) {
                ps.setString(1, lease.name());
                if (defect != Defect.RELEASE_WITHOUT_OWNER_CHECK) {
                    ps.setString(2, lease.owner());
                    ps.setLong(3, lease.token());
                }
                return ps.executeUpdate() > 0;
            }
        });
    }

    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        return run(c -> {
            Set<LeaseKey> out = new HashSet<>();
            for (LeaseKey k : leases) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET expires_at = now()"
                        + " + make_interval(secs => ?) WHERE name = ? AND owner = ? AND token = ? AND expires_at > now()")) {
                    ps.setDouble(1, leaseTime.toMillis() / 1000.0);
                    ps.setString(2, k.name());
                    ps.setString(3, k.owner());
                    ps.setLong(4, k.token());
                    if (ps.executeUpdate() > 0) {
                        out.add(k);
                    }
                }
            }
            return out;
        });
    }

    @Override
    public List<LockInfo> inspect() {
        return run(c -> {
            List<LockInfo> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT name, owner, token, acquired_at, expires_at,"
                    + " owner IS NOT NULL AND expires_at > now() FROM " + table + " ORDER BY name");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    boolean held = rs.getBoolean(6);
                    out.add(new LockInfo(rs.getString(1), held ? rs.getString(2) : null, rs.getLong(3),
                            rs.getObject(4, OffsetDateTime.class).toInstant(),
                            rs.getObject(5, OffsetDateTime.class).toInstant(), held));
                }
            }
            return out;
        });
    }

    @Override
    public void close() {
    }
}
