package dev.baton.jdbc.lease;

import dev.baton.jdbc.internal.ConnectionSupport;
import dev.baton.jdbc.internal.SessionKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * MariaDB and MySQL: the server-side wake-ups of the lease strategy's line, as named locks ({@code GET_LOCK}) that
 * a client keeps on a connection of its own — <em>bells</em>, each let go to wake whoever waits on it:
 * <ul>
 *   <li>the <em>holder's bell</em> ({@link SessionKeys#myBellKey}): the holder of a contended lock keeps it for as
 *       long as it holds the lease, and lets it go right after its release has freed the row; the head of the line
 *       waits on it, and rung goes straight to the grant;</li>
 *   <li>a <em>ticket bell</em> ({@link SessionKeys#myTicketBellKey}): a waiter keeps one while it has a place in
 *       line, and lets it go when it leaves the line (granted, or gone); the waiter right behind it waits on it, and
 *       rung is (usually) the head: it waits on the new holder's bell next, on the same connection.</li>
 * </ul>
 * So each waiter waits on the server for the one ahead of it, as ZooKeeper's waiters watch their predecessor, and a
 * client that dies lets all its bells go with its session.
 *
 * <p>Bells only wake: the row and the line decide every grant, so a bell that is missing (the lock was taken
 * uncontended, the bell connection failed, or a waiter's probe held the bell at the instant it was armed), late, or
 * let go for nothing costs waiting time, never safety. A waiter that finds nobody keeping the bell of the waiter
 * ahead goes back to the line-paced poll; one that finds nobody keeping the holder's bell (let go already, or never
 * armed) tries the grant once, and polls only if the same holder still holds.
 *
 * <p>Arming and letting go run on one thread of the client ({@code baton-bell}), in the order asked (a grantee's
 * holder's bell is armed before its ticket bell is let go, so the waiter that wakes behind it finds the new holder's
 * bell armed), and add no round trip to the acquire or the release that asks for them. The bell connection is
 * borrowed from the pool when a bell is armed and none is held, and given back once none has been held for a second
 * (a connection is never given back holding a bell; one that failed is discarded, which ends its session and so lets
 * its bells go).
 */
final class LineBells implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LineBells.class);
    /** How long the bell connection is kept without a bell, for the next contended grant. */
    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** What a wait for the bell ended with. */
    enum Rang {
        /** The bell was held and then let go: its keeper released, was granted or left, or its session ended. */
        RUNG,
        /** Nobody held the bell: its keeper armed none (or not yet). */
        NO_BELL,
        /** The bell was still held when the wait ended. */
        STILL_HELD
    }

    private final DataSource dataSource;
    private final SessionKeys keys;
    private final String description;
    private final ScheduledThreadPoolExecutor ringer;
    /** Set by the first {@link #arm}: until then there is nothing to let go, and no thread. */
    private volatile boolean used;
    /** Set first thing by {@link #close()}: nothing is armed from then on. */
    private volatile boolean closed;
    // the bell connection and what it holds: touched only on the ringer thread
    private volatile Connection session;
    private final Map<String, Long> armed = new HashMap<>();
    private long idleSince;

    LineBells(DataSource dataSource, String table, String description) {
        this.dataSource = dataSource;
        this.keys = new SessionKeys(table);
        this.description = description;
        this.ringer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "baton-bell");
            t.setDaemon(true);
            return t;
        });
        this.ringer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** The holder's bell of lock {@code name}. */
    String holderBell(String name) {
        return keys.myBellKey(name);
    }

    /** The ticket bell of {@code owner}'s place in the line of {@code name}, taken at {@code since} (µs). */
    String ticketBell(String name, String owner, long since) {
        return keys.myTicketBellKey(name, owner, since);
    }

    /**
     * This client keeps {@code bell} for {@code tenure} (the grant's token; 0 for a place in line), asynchronously.
     */
    void arm(String bell, long tenure) {
        used = true;
        ask(new Op(bell, tenure, true));
    }

    /**
     * {@code bell} is let go if this client keeps it for {@code tenure}, asynchronously (asked after the release, or
     * the grant or withdrawal that ended a place in line, committed), which wakes whoever waits on it.
     */
    void letGo(String bell, long tenure) {
        if (used) {
            ask(new Op(bell, tenure, false));
        }
    }

    /** Arming ({@code arm}) or letting go of a bell. */
    private record Op(String bell, long tenure, boolean arm) {
    }

    /** The operations asked and not yet sent, in order; the ringer sends all that are waiting in one statement. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Op> asked = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicBoolean draining = new java.util.concurrent.atomic.AtomicBoolean();
    /** The most operations one statement sends. */
    private static final int OPS_PER_STATEMENT = 100;

    private void ask(Op op) {
        asked.add(op);
        if (draining.compareAndSet(false, true)) {
            try {
                ringer.execute(this::drain);
            } catch (RejectedExecutionException closed) {
                // the client closed: its bells went with the connection
            }
        }
    }

    /** On the ringer: sends what was asked, in order, in as few statements as it can. */
    private void drain() {
        while (true) {
            List<Op> batch = new java.util.ArrayList<>();
            for (Op op; batch.size() < OPS_PER_STATEMENT && (op = asked.poll()) != null; ) {
                batch.add(op);
            }
            if (batch.isEmpty()) {
                draining.set(false);
                if (asked.isEmpty() || !draining.compareAndSet(false, true)) {
                    return; // (an operation asked just now is drained by this loop, or by the drain it submitted)
                }
                continue;
            }
            send(batch);
        }
    }

    /**
     * One statement for {@code batch}: {@code GET_LOCK(bell, 0)} for a bell to arm that this connection does not
     * keep, {@code RELEASE_LOCK(bell)} for one to let go that it keeps for that tenure, in the order asked (MySQL and
     * MariaDB evaluate a select list left to right); the rest need no round trip.
     */
    private void send(List<Op> batch) {
        List<Op> sent = new java.util.ArrayList<>();
        for (Op op : batch) {
            if (op.arm() && closed) {
                continue; // the client is closing: its bells go, none is armed
            }
            if (op.arm()) {
                if (armed.containsKey(op.bell())) {
                    armed.put(op.bell(), op.tenure()); // kept here already (a lease lost without a release, re-granted)
                } else {
                    armed.put(op.bell(), op.tenure()); // unless GET_LOCK says no, below
                    sent.add(op);
                }
            } else if (armed.remove(op.bell(), op.tenure())) {
                sent.add(op);
            }
        }
        if (!sent.isEmpty()) {
            StringBuilder sql = new StringBuilder("SELECT ");
            for (int i = 0; i < sent.size(); i++) {
                sql.append(i == 0 ? "" : ", ").append(sent.get(i).arm() ? "GET_LOCK(?, 0)" : "RELEASE_LOCK(?)");
            }
            try {
                if (session == null) {
                    session = dataSource.getConnection();
                }
                try (PreparedStatement ps = session.prepareStatement(sql.toString())) {
                    for (int i = 0; i < sent.size(); i++) {
                        ps.setString(i + 1, sent.get(i).bell());
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        for (int i = 0; i < sent.size(); i++) {
                            Op op = sent.get(i);
                            if (op.arm() && rs.getInt(i + 1) != 1) {
                                // held this instant by a waiter's probe: no bell this time; the waiter behind polls
                                armed.remove(op.bell(), op.tenure());
                            }
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                failed("arming and letting go of " + sent.size() + " bell(s)", e);
            }
        }
        if (armed.isEmpty()) {
            idle();
        }
    }

    /** No bell is held: the connection goes back to the pool unless one is armed within a second. */
    private void idle() {
        idleSince = System.nanoTime();
        try {
            ringer.schedule(this::giveBackIfIdle, IDLE_NANOS, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // close() gives it back
        }
    }

    private void giveBackIfIdle() {
        if (session != null && armed.isEmpty() && System.nanoTime() - idleSince >= IDLE_NANOS) {
            giveBack();
        }
    }

    private void giveBack() {
        try {
            session.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("{}: giving the bell connection back failed", description, e);
        }
        session = null;
    }

    /** The bell connection failed: it is discarded, which ends its session and so lets every bell on it go. */
    private void failed(String what, Exception e) {
        LOG.debug("{}: {} failed ({}); the waiters behind this client's holders and waiters poll until their bells"
                + " are armed again", description, what, e.getMessage());
        armed.clear();
        if (session != null) {
            ConnectionSupport.discard(dataSource, session, what + " failed");
            session = null;
        }
    }

    /**
     * A waiter waits on {@code c} for {@code bell}, at most {@code timeoutNanos}. One statement: takes the bell at
     * once if nobody holds it (then nobody armed it: {@link Rang#NO_BELL}), else waits for it, and lets it go at once
     * either way, so that it can be armed again.
     */
    Rang await(Connection c, String bell, long timeoutNanos) throws SQLException {
        String key = bell;
        try (PreparedStatement ps = c.prepareStatement("SELECT IF(GET_LOCK(?, 0) = 1, 2, GET_LOCK(?, ?)),"
                + " RELEASE_LOCK(?)")) {
            ps.setString(1, key);
            ps.setString(2, key);
            ps.setBigDecimal(3, BigDecimal.valueOf(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)), 3));
            ps.setString(4, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                int got = rs.getInt(1);
                return rs.wasNull() || got == 0 ? Rang.STILL_HELD : got == 2 ? Rang.NO_BELL : Rang.RUNG;
            }
        }
    }

    /** Lets every bell go and gives the connection back; arms and lets go nothing after. */
    @Override
    public void close() {
        closed = true;
        if (!used) {
            ringer.shutdownNow();
            return;
        }
        try {
            ringer.execute(() -> {
                if (session == null) {
                    return;
                }
                if (!armed.isEmpty()) {
                    try (PreparedStatement ps = session.prepareStatement("DO RELEASE_ALL_LOCKS()")) {
                        ps.execute(); // the connection is this client's alone: only its bells
                    } catch (SQLException | RuntimeException e) {
                        failed("letting go of every bell on close", e); // discarded: its session takes them along
                        return;
                    }
                    armed.clear();
                }
                giveBack();
            });
        } catch (RejectedExecutionException alreadyClosed) {
            return;
        }
        ringer.shutdown(); // delayed give-backs are dropped: the task above gave the connection back
        try {
            if (!ringer.awaitTermination(5, TimeUnit.SECONDS)) {
                ringer.shutdownNow();
                Connection stuck = session;
                if (stuck != null) {
                    // the ringer is stuck in a statement: its connection goes, and its bells with its session
                    ConnectionSupport.discard(dataSource, stuck, "the bell thread did not end on close");
                }
            }
        } catch (InterruptedException e) {
            ringer.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
