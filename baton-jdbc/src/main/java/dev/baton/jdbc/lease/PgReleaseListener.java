package dev.baton.jdbc.lease;

import dev.baton.jdbc.internal.ReleaseNotice;
import dev.baton.LockBackendException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.DialectTraits;
import dev.baton.spi.ReleaseListener;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One {@code LISTEN} connection per client, on its own daemon thread. Each release notification wakes the
 * waiter it names as next in the lock's line, or every waiter for that name ({@link ReleaseNotice}). If the connection drops, the thread reconnects with capped exponential backoff
 * and tells the core to resynchronise (notifications sent meanwhile are lost, so every waiter retries);
 * until then waiters fall back to their bounded backoff poll. A {@code SELECT 1} every 5 s under a network
 * timeout notices a half-open connection that would otherwise just stay silent.
 */
public final class PgReleaseListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PgReleaseListener.class);
    private static final int POLL_MILLIS = 250;
    /** A round trip every 5 s proves the connection alive; a dead one fails within the network timeout. */
    private static final int PROBE_EVERY_POLLS = 20;
    private static final int NETWORK_TIMEOUT_MILLIS = 15_000;

    private final DataSource dataSource;
    private final String channel;
    private final ReleaseListener listener;
    private final String description;
    private final Thread thread;
    private final CountDownLatch firstListen = new CountDownLatch(1);
    private volatile boolean closed;
    /** The connection the thread LISTENs on, while it does: {@link #close()} aborts it to end the wait at once. */
    private volatile Connection listening;
    private volatile SQLException firstFailure;
    private boolean warnedNoSkip;

    PgReleaseListener(DataSource dataSource, String channel, ReleaseListener listener, String description) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.listener = listener;
        this.description = description;
        this.thread = new Thread(this::loop, "baton-pg-listener");
        this.thread.setDaemon(true);
    }

    /**
     * Whether connections of this data source reach PostgreSQL through a pooler (PgBouncer, in any pool mode),
     * where a {@code LISTEN} would stay on a pooled server session and its notifications reach whichever
     * client the pooler lends that session next. One connection: the process id that the login's
     * BackendKeyData gave the driver ({@link PGConnection#getBackendPID()}) is the server session's own
     * ({@code pg_backend_pid()}) on a direct connection, or through a plain TCP proxy; a pooler answers the
     * login itself with a key of its own.
     */
    public static boolean throughPooler(DataSource dataSource) throws SQLException {
        return ConnectionSupport.autoCommitted(dataSource, DialectTraits.of(Dialect.POSTGRESQL), c -> {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                return rs.getInt(1) != c.unwrap(PGConnection.class).getBackendPID();
            }
        });
    }

    /** Starts listening; returns once the first {@code LISTEN} is in place, or throws if it cannot be. */
    void start() {
        thread.start();
        try {
            if (!firstListen.await(30, TimeUnit.SECONDS)) {
                close();
                throw new LockBackendException(description, "LISTEN " + channel + " did not start within 30 s", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new LockBackendException(description, "interrupted while starting LISTEN " + channel, e);
        }
        if (firstFailure != null) {
            close();
            throw new LockBackendException(description, "LISTEN " + channel + " failed: " + firstFailure.getMessage(),
                    firstFailure);
        }
    }

    private void loop() {
        long backoff = 100;
        boolean first = true;
        while (!closed) {
            Connection c = null;
            try {
                c = dataSource.getConnection();
                c.setAutoCommit(true);
                // a half-open connection must fail rather than wait forever: the periodic probe below hits this
                c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN " + channel);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                listening = c;
                if (!skipTheDriversAvailabilityRead(c) && !warnedNoSkip) {
                    warnedNoSkip = true;
                    log.info("{}: this PostgreSQL driver keeps its 1 ms read after each batch of notifications, so"
                            + " each release notice reaches its waiter about a millisecond later (see"
                            + " PgReleaseListener#skipTheDriversAvailabilityRead)", description);
                }
                if (first) {
                    first = false;
                    firstListen.countDown();
                } else {
                    log.info("{}: LISTEN {} re-established", description, channel);
                    listener.resynchronize();
                }
                backoff = 100;
                int polls = 0;
                while (!closed) {
                    if (++polls % PROBE_EVERY_POLLS == 0) {
                        try (Statement st = c.createStatement()) {
                            st.execute("SELECT 1");
                        }
                    }
                    PGNotification[] notes = pg.getNotifications(POLL_MILLIS);
                    if (notes != null) {
                        for (PGNotification n : notes) {
                            ReleaseNotice.deliver(n.getParameter(), listener);
                        }
                    }
                    if (c.isClosed()) {
                        throw new SQLException("listener connection closed");
                    }
                }
            } catch (SQLException | RuntimeException e) {
                discard(c);
                c = null;
                if (closed) {
                    return;
                }
                if (first) {
                    firstFailure = e instanceof SQLException se ? se : new SQLException(e);
                    firstListen.countDown();
                    return;
                }
                log.warn("{}: LISTEN connection lost ({}); reconnecting in {} ms", description, e.getMessage(), backoff);
                listener.resynchronize();
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(backoff * 2, 5000);
            } finally {
                listening = null;
                discard(c);
            }
        }
    }

    /**
     * Turns off, for one connection, the read that pgjdbc (42.7.x) makes before {@code getNotifications} returns:
     * {@code PGStream.hasMessagePending()} reads the socket for up to 1 ms whenever no byte is buffered. That read is
     * meant to happen at most once a second (a workaround for SSL streams whose {@code available()} says 0), but the
     * driver only counts the second from a read that found the stream at its end, never from one that timed out, so in
     * practice every batch of notifications waited 1 ms before it was handed over. Measured here: a release notice
     * reached a JDBC listener 1.1-1.3 ms after its {@code NOTIFY} started, a C libpq listener 0.08-0.11 ms; in the
     * benchmark's W2 that was most of a PostgreSQL hand-over.
     *
     * <p>This puts the driver's next such read off for ever, so {@code getNotifications} hands over what it read at
     * once. Nothing is lost: a notification still on its way (or buffered in an SSL engine) is read by the next
     * {@code getNotifications(timeout)}, which blocks on the socket, and this loop calls it at once. The driver's
     * internals are reached by reflection; a driver without them keeps its read (returns false), which costs only
     * that millisecond.
     *
     * @return whether the read was turned off
     */
    static boolean skipTheDriversAvailabilityRead(Connection c) {
        try {
            Object executor = c.unwrap(org.postgresql.core.BaseConnection.class).getQueryExecutor();
            java.lang.reflect.Field stream = org.postgresql.core.QueryExecutorBase.class.getDeclaredField("pgStream");
            stream.setAccessible(true);
            Object pgStream = stream.get(executor);
            java.lang.reflect.Field next = org.postgresql.core.PGStream.class
                    .getDeclaredField("nextStreamAvailableCheckTime");
            next.setAccessible(true);
            next.setLong(pgStream, Long.MAX_VALUE);
            return true;
        } catch (ReflectiveOperationException | SQLException | RuntimeException | LinkageError e) {
            log.debug("the PostgreSQL driver's availability read stays on: {}", e.toString());
            return false;
        }
    }

    /**
     * The listener's connection is never returned to the pool: it is still LISTENing and carries a network
     * timeout, and whoever borrowed it next would collect notifications nobody reads.
     */
    private void discard(Connection c) {
        if (c != null) {
            ConnectionSupport.discard(dataSource, c, description + " LISTEN connection");
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        // The thread may sit in a poll of up to POLL_MILLIS on the socket, which an interrupt does not end; a
        // client's close (and a short process's exit) would wait for it. Aborting the connection ends the read
        // at once; the thread then discards the connection. (PostgreSQL logs an idle client's end of
        // connection only at DEBUG1.)
        Connection c = listening;
        if (c != null) {
            try {
                c.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                log.debug("{}: could not abort the LISTEN connection; its poll ends within {} ms", description,
                        POLL_MILLIS, e);
            }
        }
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
