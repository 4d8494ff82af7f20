package dev.baton.jdbc;

import dev.baton.LockBackendException;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockBackend;
import dev.baton.spi.ReleaseListener;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The lease-row strategy over a {@link DataSource}: each operation borrows a connection for one call and
 * gives it back. A driver error becomes a {@link LockBackendException} naming the backend and operation.
 * Connections that failed mid-statement are closed by the pool (HikariCP evicts on SQL state class 08 and
 * on socket timeouts), never reused by Baton itself: it keeps no connection between calls, except the
 * PostgreSQL listener's own.
 */
final class JdbcLeaseBackend implements LockBackend {
    private final DataSource dataSource;
    private final LeaseTable table;
    private final String description;
    private PgReleaseListener pgListener;

    JdbcLeaseBackend(DataSource dataSource, LeaseTable table) {
        this.dataSource = dataSource;
        this.table = table;
        this.description = "jdbc-lease/" + table.dialect().id() + " (table " + table.table + ")";
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public boolean notifiesReleases() {
        return table instanceof PostgresLeaseTable;
    }

    @Override
    public void start(ReleaseListener listener) {
        if (table instanceof PostgresLeaseTable pg) {
            pgListener = new PgReleaseListener(dataSource, pg.channel(), listener, description);
            pgListener.start();
        }
    }

    private interface SqlCall<T> {
        T call(Connection c) throws SQLException;
    }

    private <T> T run(String what, SqlCall<T> call) {
        try (Connection c = dataSource.getConnection()) {
            return call.call(c);
        } catch (SQLException e) {
            throw new LockBackendException(description, what + " failed: " + e.getMessage()
                    + " (SQL state " + e.getSQLState() + ")", e);
        }
    }

    @Override
    public AcquireResult tryAcquire(String name, String owner, Duration leaseTime) {
        return run("acquire of '" + name + "'", c -> table.tryAcquire(c, name, owner, leaseTime.toMillis()));
    }

    @Override
    public boolean release(LeaseKey lease) {
        return run("release of '" + lease.name() + "' (token " + lease.token() + ")", c -> table.release(c, lease));
    }

    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        List<LeaseKey> all = new ArrayList<>(leases);
        return run("renewal of " + all.size() + " lease(s)", c -> {
            Set<LeaseKey> renewed = new HashSet<>();
            for (int i = 0; i < all.size(); i += LeaseTable.RENEW_BATCH) {
                renewed.addAll(table.renew(c, all.subList(i, Math.min(all.size(), i + LeaseTable.RENEW_BATCH)),
                        leaseTime.toMillis()));
            }
            return renewed;
        });
    }

    @Override
    public List<LockInfo> inspect() {
        return run("listing locks", table::inspect);
    }

    int purge(Duration olderThan) {
        return run("purge of rows expired more than " + olderThan.toMillis() + " ms ago",
                c -> table.purge(c, olderThan.toMillis()));
    }

    @Override
    public void close() {
        if (pgListener != null) {
            pgListener.close();
        }
    }
}
