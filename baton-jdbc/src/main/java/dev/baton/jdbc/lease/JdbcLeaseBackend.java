package dev.baton.jdbc.lease;

import dev.baton.ForcedRelease;
import dev.baton.LockBackendException;
import dev.baton.LockInfo;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.ConnectionSupport.SqlCall;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.jdbc.readwrite.ReadWriteTable;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.ConfirmsGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.WaitingQueue;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The lease-row strategy over a {@link DataSource}: a row per lock in the lease table, with owner, fencing
 * token and expiry by the database clock. Each operation borrows a connection for one call, in auto-commit
 * mode whatever the pool's default, and gives it back.
 *
 * <p>Algorithm:
 * <ol>
 *   <li>Acquire: look first (a read): a live row is busy, and costs no write or commit. Otherwise one step of
 *       the dialect's {@link LeaseTable#tryAcquire} takes the row if it is free or expired, drawing a fresh token
 *       under the row lock, or reports its holder. A row that is the session strategy's marker is refused
 *       ({@link dev.baton.jdbc.StrategyConflictException}): one name, one lock.</li>
 *   <li>Renew: extend every live row whose name, owner and token match, in as few statements as the dialect
 *       allows ({@link LeaseTable#renewBatch}); the rows not extended are lost.</li>
 *   <li>Release: free the row where name, owner and token match ({@code expires_at} no later than now);
 *       PostgreSQL announces it on the table's {@code NOTIFY} channel in the same statement, and
 *       {@link PgReleaseListener} wakes the waiters of other clients.</li>
 *   <li>Confirm: one read, the row matches name, owner and token and has not expired.</li>
 *   <li>Read and write modes run on {@code <table>_rw} ({@link ReadWriteTable}).</li>
 *   <li>Idempotent calls (renew, release, confirm) are made again at once if the pool handed out a dead
 *       connection, or (a few times) if a REPEATABLE READ pool default made a statement fail with 40001.</li>
 * </ol>
 * The SQL of each dialect is in its {@link LeaseTable}: {@link PostgresLeaseTable}, {@link MySqlFamilyLeaseTable}
 * (MariaDB, MySQL), {@link SqliteLeaseTable}.
 *
 * <p>A driver error becomes a {@link LockBackendException} naming the backend and operation.
 * Connections that failed mid-statement are closed by the pool (HikariCP evicts on SQL state class 08 and
 * on socket timeouts), never reused by Baton itself: it keeps no connection between calls, except the
 * PostgreSQL listener's own.
 */
public class JdbcLeaseBackend implements WaitingQueue, ReadWriteModes, ConfirmsGrants {
    private final DataSource dataSource;
    private final DataSource notifications;
    private final LeaseTable table;
    private final ReadWriteTable rwTable;
    private final String description;
    private final DialectTraits traits;
    private PgReleaseListener pgListener;
    private ReleaseListener listener;

    /**
     * @param notifications where the PostgreSQL release listener {@code LISTEN}s (the main data source, or a
     *                      direct one the user gave), or null for none: waiters in other clients then poll
     */
    private JdbcLeaseBackend(DataSource dataSource, LeaseTable table, DataSource notifications) {
        this.dataSource = dataSource;
        this.notifications = notifications;
        this.table = table;
        this.traits = DialectTraits.of(table.dialect());
        this.rwTable = ReadWriteTable.of(table.dialect(), table.table);
        this.description = "jdbc-lease/" + table.dialect().id() + " (table " + table.table + ")";
    }

    /**
     * The backend for {@code table}: on PostgreSQL with a listening data source one that {@link NotifiesReleases}
     * (LISTEN/NOTIFY), elsewhere one that does not, so the core polls at the holder's expiry and its backoff.
     *
     * @param notifications where the PostgreSQL release listener {@code LISTEN}s, or null for none
     */
    public static JdbcLeaseBackend create(DataSource dataSource, LeaseTable table, DataSource notifications) {
        return notifications != null && table.releaseChannel() != null
                ? new Notifying(dataSource, table, notifications)
                : new JdbcLeaseBackend(dataSource, table, null);
    }

    /** The lease backend on PostgreSQL with a listener connection: releases wake waiters in other clients. */
    public static final class Notifying extends JdbcLeaseBackend implements NotifiesReleases {
        private Notifying(DataSource dataSource, LeaseTable table, DataSource notifications) {
            super(dataSource, table, notifications);
        }

        @Override
        public void listen(ReleaseListener listener) {
            super.listener = listener;
        }
    }

    /** The pool this backend borrows from, shared with the client's transaction strategies. */
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void start(String clientId) {
        if (listener != null && table.releaseChannel() != null) {
            pgListener = new PgReleaseListener(notifications, table.releaseChannel(), listener, description);
            pgListener.start();
        }
    }

    /** Attempts of an idempotent call that failed with a serialization failure (40001), the first included. */
    private static final int SERIALIZATION_ATTEMPTS = 4;

    /**
     * Borrows a connection for one call in auto-commit mode, whatever the pool's default, by
     * {@link ConnectionSupport#autoCommitted}. (Isolation is not asked for: on PostgreSQL that costs a round
     * trip per call; the statements that care handle it themselves.)
     */
    private <T> T run(String what, SqlCall<T> call) {
        return run(what, call, false);
    }

    /**
     * As {@link #run(String, SqlCall)}, for an idempotent call ({@code idempotent}: renewal, release,
     * confirmation), which is made again at once, on a connection from the pool, if it failed because
     * <ul>
     *   <li>the pool handed out a connection whose server session had died (the pool evicts the dead one),
     *       instead of waiting a whole renewal interval; or</li>
     *   <li>its statement, run at a pool's REPEATABLE READ (or SERIALIZABLE) default, found its row changed by a
     *       transaction that committed after the statement began (PostgreSQL 40001: a renewal or a takeover
     *       racing a release): at READ COMMITTED the server would have re-read the row; a new statement sees
     *       the change and does what that would have done. Each such failure needs another commit to the same
     *       rows in the meantime, so a few attempts are plenty.</li>
     * </ul>
     */
    private <T> T run(String what, SqlCall<T> call, boolean idempotent) {
        for (int attempt = 1; ; attempt++) {
            try {
                return attempt(attempt == 1 ? what : what + " (attempt " + attempt + ")", call);
            } catch (LockBackendException e) {
                if (!idempotent || !(e.getCause() instanceof SQLException se)) {
                    throw e;
                }
                boolean serialization = "40001".equals(se.getSQLState()) && attempt < SERIALIZATION_ATTEMPTS;
                if (!serialization && !(attempt == 1 && ConnectionSupport.isGone(se))) {
                    throw e;
                }
            }
        }
    }

    private <T> T attempt(String what, SqlCall<T> call) {
        try {
            return ConnectionSupport.autoCommitted(dataSource, traits, call);
        } catch (SQLException e) {
            throw new LockBackendException(description, what + " failed: " + e.getMessage()
                    + " (SQL state " + e.getSQLState() + ")", e);
        }
    }

    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        String name = request.name();
        if (request.mode() != LockMode.EXCLUSIVE) {
            return run(request.mode().name().toLowerCase() + " acquire of '" + name + "'",
                    c -> rwTable.tryAcquire(c, name, request.mode(), request.owner(), request.leaseTime().toMillis()));
        }
        String owner = request.owner();
        Duration leaseTime = request.leaseTime();
        return run("acquire of '" + name + "'", c -> {
            AcquireResult.Busy held = table.peek(c, name);
            AcquireResult result = held != null ? held : table.tryAcquire(c, name, owner, leaseTime.toMillis());
            return LeaseTable.refuseSessionMarker(result, name, table.table);
        });
    }

    /**
     * A waiting writer's claim (which holds back new readers) is its place in line: withdrawn when it stops
     * waiting. Exclusive and read requests keep nothing while they wait.
     */
    @Override
    public void withdraw(AcquireRequest request) {
        String name = request.name();
        String owner = request.owner();
        if (request.mode() == LockMode.WRITE) {
            run("withdrawing the writer's claim on '" + name + "'", c -> {
                rwTable.abandon(c, name, owner);
                return null;
            });
        }
    }

    @Override
    public boolean release(LeaseKey lease) {
        String what = "release of '" + lease.name() + "' (token " + lease.token() + ")";
        if (lease.mode() != LockMode.EXCLUSIVE) {
            String channel = table.releaseChannel();
            return run(what, c -> rwTable.release(c, lease, channel), true);
        }
        return run(what, c -> table.release(c, lease), true);
    }

    /** One read: the row matches name, owner and token and has not expired by the database clock. */
    @Override
    public boolean confirm(LeaseKey lease) {
        String what = "confirming '" + lease.name() + "' (token " + lease.token() + ")";
        if (lease.mode() != LockMode.EXCLUSIVE) {
            return run(what, c -> rwTable.isHeld(c, lease), true);
        }
        return run(what, c -> {
            AcquireResult.Busy holder = table.peek(c, lease.name());
            return holder != null && lease.owner().equals(holder.holder()) && holder.token() == lease.token();
        }, true);
    }

    /**
     * Renews plain leases in one statement on the lease table and read-write holds in one on the
     * read-write table (more only past {@link LeaseTable#renewBatch} keys), over one connection.
     */
    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        List<LeaseKey> plain = new ArrayList<>();
        List<LeaseKey> rw = new ArrayList<>();
        for (LeaseKey k : leases) {
            (k.mode() == LockMode.EXCLUSIVE ? plain : rw).add(k);
        }
        long millis = leaseTime.toMillis();
        int plainBatch = table.renewBatch();
        // the read-write table lists keys as OR terms in every dialect (3 parameters each)
        int rwBatch = Math.min(plainBatch, 1_000);
        return run("renewal of " + leases.size() + " lease(s)", c -> {
            Set<LeaseKey> renewed = new HashSet<>();
            inBatches(plain, plainBatch, part -> renewed.addAll(table.renew(c, part, millis)));
            inBatches(rw, rwBatch, part -> renewed.addAll(rwTable.renew(c, part, millis)));
            return renewed;
        }, true);
    }

    private interface Batch {
        void accept(List<LeaseKey> part) throws SQLException;
    }

    /** Calls {@code batch} on consecutive slices of at most {@code size} keys. */
    private static void inBatches(List<LeaseKey> keys, int size, Batch batch) throws SQLException {
        for (int i = 0; i < keys.size(); i += size) {
            batch.accept(keys.subList(i, (int) Math.min(keys.size(), (long) i + size)));
        }
    }

    @Override
    public List<LockInfo> inspect() {
        // the session strategy's marker rows are claims on names, not leases: its own list shows its locks
        return run("listing locks", table::inspect).stream()
                .filter(info -> !LeaseTable.SESSION_MARKER.equals(info.holder())).toList();
    }

    public int purge(Duration olderThan) {
        return run("purge of rows expired more than " + olderThan.toMillis() + " ms ago",
                c -> table.purge(c, olderThan.toMillis()));
    }

    /**
     * Reads the live grant of {@code name} and releases exactly that grant (owner and token), so a grant made
     * in between is never ended; if it changed in between, looks again (at most three times).
     */
    public Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        return run("force release of '" + name + "'", c -> {
            for (int attempt = 0; attempt < 3; attempt++) {
                AcquireResult.Busy live = table.peek(c, name);
                // a session strategy's claim is not a lease: releasing it would let both strategies hold the name
                LeaseTable.refuseSessionMarker(live, name, table.table);
                if (live == null || live.holder() == null
                        || (token.isPresent() && live.token() != token.getAsLong())) {
                    return Optional.empty();
                }
                if (table.release(c, new LeaseKey(name, live.holder(), live.token()))) {
                    return Optional.of(new ForcedRelease(name, live.holder(), live.token(), live.remaining()));
                }
            }
            return Optional.empty();
        });
    }

    @Override
    public void close() {
        if (pgListener != null) {
            pgListener.close();
        }
    }
}
