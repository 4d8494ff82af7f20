package dev.baton.checker;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.LockClients;
import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.lease.JdbcLeaseBackend;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Optional;



/**
 * Broken variants for the positive controls, loaded in the workers by class name ({@code --strategy} takes
 * a class name). Test code only: production code has no hook for any of this.
 */
final class BrokenStrategies {
    private BrokenStrategies() {
    }

    private static LockClient broken(String url, String table, Duration lease, String identity,
                                     BrokenPostgresBackend.Defect defect) {
        JdbcLeaseStrategy.DataSourceHandle ds = JdbcLeaseStrategy.dataSource(url, identity,
                Duration.ofSeconds(2), "baton-check-" + identity);
        ClientSettings settings = new ClientSettings(lease, lease.dividedBy(3), Duration.ofMillis(10),
                Duration.ofMillis(500), identity, System::nanoTime);
        return LockClients.create(new BrokenPostgresBackend(ds.dataSource(), table, defect), settings);
    }

    /** Release matches the lock name only. */
    public static final class ReleaseWithoutOwnerCheck extends JdbcLeaseStrategy {
        @Override
        public String name() {
            return "broken-release-without-owner-check";
        }

        @Override
        public LockClient newClient(String url, String table, Duration lease, String identity) {
            return broken(url, table, lease, identity, BrokenPostgresBackend.Defect.RELEASE_WITHOUT_OWNER_CHECK);
        }
    }

    /** Acquire ignores the holder's expiry. */
    public static final class AcquireWithoutExpiry extends JdbcLeaseStrategy {
        @Override
        public String name() {
            return "broken-acquire-without-expiry";
        }

        @Override
        public LockClient newClient(String url, String table, Duration lease, String identity) {
            return broken(url, table, lease, identity, BrokenPostgresBackend.Defect.ACQUIRE_WITHOUT_EXPIRY);
        }
    }

    /** The real strategy, but the worker never hears that a lease was lost and carries on regardless. */
    public static final class IgnoreLostLeases extends JdbcLeaseStrategy {
        @Override
        public String name() {
            return "lease-ignoring-lost-leases";
        }

        @Override
        public LockClient newClient(String url, String table, Duration lease, String identity) {
            return deaf(super.newClient(url, table, lease, identity));
        }
    }

    /**
     * The line as it was before places lived by a heartbeat: a place in line expires one of its waiter's leases after
     * its last refresh, not {@link JdbcLeaseBackend#PLACE_TTL}. The real library on PostgreSQL, whose statements that
     * take or refresh a place ({@code INSERT INTO <table>_queue …}, {@code … UPDATE <table>_queue …}) have their
     * time-to-live parameter, bound as {@code PLACE_TTL} in seconds, replaced by the lease in seconds. So a waiter
     * killed in line keeps a free lock from the live waiters behind it for up to a lease. PostgreSQL only.
     */
    public static final class PlacesLiveOneLease extends JdbcLeaseStrategy {
        @Override
        public String name() {
            return "broken-places-live-one-lease";
        }

        @Override
        public LockClient newClient(String url, String table, Duration lease, String identity) {
            JdbcLeaseStrategy.DataSourceHandle ds = JdbcLeaseStrategy.dataSource(url, identity,
                    lease.multipliedBy(2).compareTo(Duration.ofSeconds(2)) > 0 ? lease.multipliedBy(2)
                            : Duration.ofSeconds(2), "baton-check-" + identity);
            return JdbcLocks.builder(placesLiving(ds.dataSource(), table + "_queue", lease)).tableName(table)
                    .leaseTime(lease).clientIdPrefix(identity).build();
        }
    }

    private static DataSource placesLiving(DataSource ds, String queue, Duration lease) {
        return (DataSource) Proxy.newProxyInstance(BrokenStrategies.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                    Object result = invoke(m, ds, args);
                    return result instanceof Connection c ? placesLiving(c, queue, lease) : result;
                });
    }

    private static Connection placesLiving(Connection c, String queue, Duration lease) {
        return (Connection) Proxy.newProxyInstance(BrokenStrategies.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    Object result = invoke(m, c, args);
                    if (m.getName().equals("prepareStatement") && result instanceof PreparedStatement ps
                            && takesOrRefreshesAPlace((String) args[0], queue)) {
                        return placeForALease(ps, lease);
                    }
                    return result;
                });
    }

    private static boolean takesOrRefreshesAPlace(String sql, String queue) {
        return sql.startsWith("INSERT INTO " + queue + " ") || sql.contains("UPDATE " + queue + " ");
    }

    private static PreparedStatement placeForALease(PreparedStatement ps, Duration lease) {
        double ttl = JdbcLeaseBackend.PLACE_TTL.toMillis() / 1000.0;
        return (PreparedStatement) Proxy.newProxyInstance(BrokenStrategies.class.getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, (proxy, m, args) -> {
                    if (m.getName().equals("setDouble") && (Double) args[1] == ttl) {
                        args[1] = lease.toMillis() / 1000.0; // the broken part: a place lives a lease
                    }
                    return invoke(m, ps, args);
                });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /**
     * {@code runOnce} on a pool whose connections default to {@code autoCommit=false} and never commit: the
     * connections swallow {@code commit()} and refuse to turn auto-commit on, so the pool rolls back the grant
     * when the connection returns, whatever the library does — a runOnce that ignores commit failures. Every
     * call then finds the name free and runs its task: runs overlap and follow each other before atLeastFor.
     */
    public static final class RunOnceNeverCommitting extends JdbcRunOnceStrategy {
        @Override
        public String name() {
            return "run-once-never-committing";
        }

        @Override
        public LockClient newClient(String url, String table, Duration lease, String identity) {
            JdbcLeaseStrategy.DataSourceHandle ds = JdbcLeaseStrategy.dataSource(url, identity, Duration.ofSeconds(2),
                    "baton-check-" + identity, 3, true);
            return JdbcLocks.builder(neverCommitting(ds.dataSource())).tableName(table).leaseTime(lease)
                    .clientIdPrefix(identity).build();
        }
    }

    private static DataSource neverCommitting(DataSource ds) {
        return (DataSource) Proxy.newProxyInstance(BrokenStrategies.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                    Object result;
                    try {
                        result = m.invoke(ds, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    return result instanceof Connection c ? neverCommitting(c) : result;
                });
    }

    private static Connection neverCommitting(Connection c) {
        return (Connection) Proxy.newProxyInstance(BrokenStrategies.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "commit" -> {
                            return null; // the broken part: nothing is ever committed
                        }
                        case "setAutoCommit" -> {
                            return null; // stays off
                        }
                        case "getAutoCommit" -> {
                            return false;
                        }
                        default -> {
                            try {
                                return m.invoke(c, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }
                    }
                });
    }

    /**
     * A client whose leases drop {@code onLost} listeners and always say they are valid. A dynamic proxy, so
     * it keeps working as the API grows.
     */
    static LockClient deaf(LockClient client) {
        return (LockClient) wrap(client, LockClient.class);
    }

    private static Object wrap(Object target, Class<?> type) {
        return Proxy.newProxyInstance(BrokenStrategies.class.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            if (target instanceof Lease) {
                switch (m.getName()) {
                    case "onLost", "checkValid" -> {
                        return null;
                    }
                    case "isValid" -> {
                        return true;
                    }
                    default -> {
                        // delegated below
                    }
                }
            }
            Object result;
            try {
                result = m.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (result instanceof Lease l) {
                return wrap(l, Lease.class);
            }
            if (result instanceof Optional<?> o && o.isPresent() && o.get() instanceof Lease l) {
                return Optional.of(wrap(l, Lease.class));
            }
            if (result instanceof DistributedLock d && m.getReturnType() == DistributedLock.class) {
                return wrap(d, DistributedLock.class);
            }
            return result;
        });
    }

    /** Fences writes only: reads and begin/end are always accepted and do not raise the mark. */
    static final Fence WRITES_ONLY = new Fence() {
        @Override
        public boolean admits(String op, long token, long highestSeen) {
            return !op.equals("write") || token >= highestSeen;
        }

        @Override
        public boolean raisesMark(String op) {
            return op.equals("write");
        }

        @Override
        public String toString() {
            return "writes only";
        }
    };

    /** No fencing at all. */
    static final Fence NONE = new Fence() {
        @Override
        public boolean admits(String op, long token, long highestSeen) {
            return true;
        }

        @Override
        public boolean raisesMark(String op) {
            return false;
        }

        @Override
        public String toString() {
            return "none";
        }
    };
}
