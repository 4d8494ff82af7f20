package dev.baton.jdbc.lease;

import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.ReleaseListener;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * PostgreSQL with a listener: a release announces itself by {@code NOTIFY} on the table's channel, naming the head
 * of the line, and {@link PgReleaseListener} passes it to the core, which wakes that waiter; its next attempt goes
 * straight to the grant. A waiter takes its place before it looks, so a release before its ticket, which named
 * nobody, is seen by that look; a first attempt that went straight to the grant takes its place after, and looks
 * once more ({@link #afterNewPlace}). The client's heartbeat finds the waiters whose turn it is when the notice
 * named a head that died.
 */
final class NoticeWakeUps implements WakeUps {
    private final JdbcLeaseBackend backend;
    private final LeaseTable table;
    /** Where the release listener {@code LISTEN}s (the main data source, or a direct one the user gave). */
    private final DataSource notifications;
    private PgReleaseListener pgListener;
    private ReleaseListener listener;
    /** The core's listener, which wakes this client's waiters; null until {@link #listen}. */
    private volatile ReleaseListener coreListener;
    /** {@code <client id>#}: how the owners of this client's requests begin (the core's {@link AcquireRequest#owner()}). */
    private volatile String ownerPrefix;

    /**
     * Waiters of this client that a release notice named as the head of a line, by owner and name, with the
     * {@link System#nanoTime()} of the notice: such a waiter's next attempt goes straight to the grant (the lock was
     * just freed for it), without the look. Entries end at that attempt; a notice older than
     * {@link Contention#WINDOW_NANOS} is ignored (the waiter left, or looked again anyway).
     */
    private final ConcurrentHashMap<String, Long> namedHeads = new ConcurrentHashMap<>();

    NoticeWakeUps(JdbcLeaseBackend backend, LeaseTable table, DataSource notifications) {
        this.backend = backend;
        this.table = table;
        this.notifications = notifications;
    }

    /** The core's listener: a notice naming a waiter of this client is remembered before the core wakes it. */
    @Override
    public void listen(ReleaseListener listener) {
        coreListener = listener;
        this.listener = new ReleaseListener() {
            @Override
            public void released(String name) {
                listener.released(name);
            }

            @Override
            public void released(String name, String owner) {
                named(name, owner);
                listener.released(name, owner);
            }

            @Override
            public void resynchronize() {
                listener.resynchronize();
            }
        };
    }

    @Override
    public void start(String clientId) {
        ownerPrefix = clientId + "#";
        if (listener != null && table.releaseChannel() != null) {
            pgListener = new PgReleaseListener(notifications, table.releaseChannel(), listener, backend.description());
            pgListener.start();
        }
    }

    @Override
    public void close() {
        if (pgListener != null) {
            pgListener.close();
        }
    }

    private static String headKey(String name, String owner) {
        return owner.length() + ":" + owner + name;
    }

    /** A notice named {@code owner} next in the line of {@code name}: remembered only for this client's waiters. */
    void named(String name, String owner) {
        String self = ownerPrefix;
        if (self != null && owner.startsWith(self)) {
            if (namedHeads.size() >= 10_000) {
                namedHeads.clear(); // a hint: a waiter forgotten early only looks before its grant
            }
            namedHeads.put(headKey(name, owner), System.nanoTime());
        }
    }

    /**
     * Whether a notice named this waiter the head of its line lately (and forgets it). Only a request that is in
     * line counts: a notice can arrive after its waiter was granted (woken by the release in its own client) or left,
     * and the same thread's next acquisition must not take it for its own turn.
     */
    @Override
    public boolean namedHead(AcquireRequest request) {
        if (namedHeads.isEmpty()) {
            return false;
        }
        Long at = namedHeads.remove(headKey(request.name(), request.owner()));
        return at != null && System.nanoTime() - at < Contention.WINDOW_NANOS && backend.line().has(request);
    }

    /** The waiter's place ended (granted, or it left): a notice naming it from now on is not its turn. */
    private void forgetNamed(AcquireRequest request) {
        if (!namedHeads.isEmpty()) {
            namedHeads.remove(headKey(request.name(), request.owner()));
        }
    }

    @Override
    public void granted(AcquireRequest request, Line.Place place, long token) {
        forgetNamed(request);
    }

    @Override
    public void left(AcquireRequest request) {
        forgetNamed(request);
    }

    /**
     * PostgreSQL: a waiter takes its place before it looks, so it is in line one statement sooner and a release
     * after its ticket names it; the look then sees any release before it (no second look after the ticket, as
     * {@link #afterNewPlace} makes for a place taken after the look).
     */
    @Override
    public boolean placeBeforeLook() {
        return pgListener != null;
    }

    @Override
    public boolean pacedByLine() {
        return pgListener == null;
    }

    /**
     * {@code busy}, unless this attempt has just taken a new place in line: a release that came between this
     * attempt's look and its ticket may have named nobody (a release with an empty line sends no notice), so the
     * waiter looks once more now that it is in line, and takes a lock it finds free with nobody ahead. (A release
     * whose statement read the line just before the ticket committed and committed itself after this look still
     * names nobody: that waiter then looks at its first backoff poll, after {@code minPollInterval} at most, since a
     * new place is taken at the first attempt.)
     */
    @Override
    public AcquireResult afterNewPlace(Connection c, AcquireRequest request, boolean newPlace,
                                       AcquireResult.Busy busy) throws SQLException {
        if (!newPlace || pgListener == null) {
            return busy;
        }
        LeaseTable.Look again = table.look(c, request.name(), request.owner());
        if (again.holder() != null || again.ahead() > 0) {
            return busy;
        }
        AcquireResult result = table.tryAcquire(c, request.name(), request.owner(), request.leaseTime().toMillis(),
                true);
        if (result instanceof AcquireResult.Granted granted) {
            return backend.granted(request, granted);
        }
        return busy; // taken by someone else in between: the notice of its release will name the line's head
    }

    @Override
    public long enqueue(Connection c, AcquireRequest request) throws SQLException {
        table.enqueue(c, request.name(), request.owner(), JdbcLeaseBackend.PLACE_TTL.toMillis());
        return 0;
    }

    @Override
    public boolean heartbeatFindsTurns() {
        return coreListener != null;
    }

    @Override
    public void placeLost(LeaseTable.Ticket ticket) {
        coreListener.released(ticket.name(), ticket.owner());
    }

    @Override
    public void turn(LeaseTable.Ticket ticket) {
        named(ticket.name(), ticket.owner());
        coreListener.released(ticket.name(), ticket.owner());
    }
}
