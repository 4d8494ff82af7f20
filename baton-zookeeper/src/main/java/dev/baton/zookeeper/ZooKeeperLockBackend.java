package dev.baton.zookeeper;

import dev.baton.ForcedRelease;
import dev.baton.LockBackendException;
import dev.baton.LockClientClosedException;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.AnnouncesTurns;
import dev.baton.spi.ClearsLostGrants;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsSessionState;
import dev.baton.spi.WaitingQueue;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * ZooKeeper locks over a {@link CuratorFramework}. See {@link ZooKeeperLocks} for the guarantees.
 *
 * <p><b>Algorithm</b> (per lock, a parent znode {@code <root>/<encoded name>}, a container):
 * <ol>
 *   <li>An acquisition creates, once, a protected {@code EPHEMERAL_SEQUENTIAL} member node
 *       {@code _c_<uuid>-<mode>-<seq>} whose data is the owner; the create's {@link Stat} gives its {@code czxid}
 *       (a protected create recovered after a connection loss reads it with one {@code exists}). The node is the
 *       waiter's place ({@link WaitingQueue}), kept by its {@link AcquireRequest} object across the core's wait
 *       slices.</li>
 *   <li>It reads the parent's children and sorts its line by sequence: exclusive members ({@code x}) form one line,
 *       read and write members ({@code r}, {@code w}) another, so a plain lock and a read-write lock of one name
 *       are two locks. An exclusive member or a writer holds when it is first in its line; a reader holds when no
 *       writer is ahead of it.</li>
 *   <li>Holding: granted with token = {@code czxid} for an exclusive member, and for a read-write member the
 *       parent's {@code pzxid} in the read that showed the grant (see {@link Line#token}); no watch of its own (the
 *       renewal reads its node). Not
 *       holding: a data watch on the one member it waits for (its predecessor; a reader, the nearest writer ahead),
 *       which wakes the core's waiter when it changes — no herd; and {@link AcquireResult.Busy} names the head of the
 *       line (from the watch's own read when the member it waits for is the head; a waiter further back does not
 *       name it). Until the watch fires or the connection comes back, every further attempt of that waiter answers
 *       from that look without a request (the core's safety-net poll costs the server nothing). A try-once that does
 *       not hold deletes its node before answering; a try-once that finds members ahead of it in the children never
 *       creates
 *       one.</li>
 *   <li>Release deletes the node. Renewal is one read-only {@code multi} per {@value HeldNodes#RENEW_BATCH} leases
 *       (fewer when their paths are long: a request and its answer stay under 256 KB; ZooKeeper 3.6+): each
 *       lease is renewed only if the server shows its node, on the current session, with its node's {@code czxid};
 *       a node deleted under its holder (by hand, or an operator's forced release) is lost at the next renewal.</li>
 * </ol>
 *
 * <p><b>Session.</b> Curator's connection states are reported to the core ({@link ReportsSessionState}):
 * SUSPENDED → suspended; RECONNECTED on the same session → resumed (each lease confirmed by {@link #confirm}: its node
 * exists, its {@code ephemeralOwner} is the current session and its {@code czxid} the node's); LOST, or a
 * reconnection on another session → session lost. A release that cannot reach the server keeps the node to be
 * deleted when the connection returns on the same session; a lost session deleted it already.
 *
 * <p><b>A lease lost while its session lives</b> (its deadline passed during a disconnection shorter than the
 * session timeout): the core says so ({@link ClearsLostGrants#lost}) and the node is deleted in the background as
 * soon as the server answers — only if it still shows the node on its session with its {@code czxid}, at the version
 * read — or, if the connection drops first, when it returns on the same session. The lock is free for the next in
 * line then, not when the application closes the lost lease.
 *
 * <p><b>Parts.</b> This class is the acquisition's steps ({@link #tryAcquire}) and the SPI's entry points; the rest is
 * package-private, one concern each: {@link ZooKeeperNames} (znode names), {@link Line} (what a read of the line
 * decides, and the token), {@link Places} and {@link Place} (the waiting side: places in line, their watches),
 * {@link HeldNodes} (granted nodes: release, renewal, check), {@link Deletes} (this client's nodes deleted later),
 * {@link SessionStates} (Curator's connection states), {@link Inspection} (list, forced release) and {@link Calls}
 * (every blocking call bounded by the connection timeout).
 */
final class ZooKeeperLockBackend implements AnnouncesTurns, ReadWriteModes, ReportsSessionState, ClearsLostGrants {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
    /** Bound on re-reading the line in one attempt when the member it looked at vanished meanwhile. */
    private static final int MAX_REREADS = 50;

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final String root;
    private final Calls calls;
    private final Deletes deletes;
    private final Places places;
    private final HeldNodes held;
    private final SessionStates sessions;
    private final Inspection inspection;
    private final ConnectionStateListener stateListener = (c, state) -> stateChanged(state);
    private volatile ReleaseListener releases;
    private volatile ReportsSessionState.Listener session;
    private volatile boolean closed;

    ZooKeeperLockBackend(CuratorFramework client, boolean ownsClient, String root, String endpoint) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.root = root;
        this.calls = new Calls(client, "zookeeper (" + endpoint + ", root " + root + ")");
        this.deletes = new Deletes(calls);
        this.places = new Places(calls, deletes);
        this.held = new HeldNodes(calls, deletes);
        this.sessions = new SessionStates(calls, held, places, deletes);
        this.inspection = new Inspection(calls, held, root);
    }

    @Override
    public String description() {
        return calls.description();
    }

    @Override
    public void listen(ReleaseListener listener) {
        this.releases = listener;
    }

    @Override
    public void watchSession(Listener listener) {
        this.session = listener;
    }

    @Override
    public void start(String clientId) {
        sessions.start();
        client.getConnectionStateListenable().addListener(stateListener);
    }

    // ---- acquire -----------------------------------------------------------------------------------------------

    /**
     * One attempt, in steps: (1) a waiter whose watch is armed and who heard nothing since its last look answers from
     * that look, without a request; (2) a try-once that sees members ahead of it answers busy without taking a place;
     * (3) {@link #look} at the line from the waiter's place, again if the line changed under the read. Cleaning up
     * after a failure is the core's: a waiter that ends without a grant is {@link #withdraw withdrawn} (its node
     * deleted), and a place that ended with its session is forgotten here as the acquisition fails.
     */
    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        String name = request.name();
        String parent = ZooKeeperNames.parent(root, name);
        try {
            Place kept = places.get(request);
            AcquireResult.Busy unchanged = kept == null ? null : kept.unchanged();
            if (unchanged != null) {
                return unchanged;                                                           // step 1
            }
            if (request.patience() == AcquireRequest.Patience.TRY_ONCE && kept == null) {
                AcquireResult.Busy busy = busyWithoutAPlace(request, parent);               // step 2
                if (busy != null) {
                    return busy;
                }
            }
            for (int reread = 0; reread < MAX_REREADS; reread++) {
                AcquireResult result = look(request, parent);                              // step 3
                if (result != null) {
                    return result;
                }
            }
            // the line kept changing under every read: no watch is armed, so the core's safety-net poll retries
            return new AcquireResult.Busy(null, -1, null);
        } catch (InterruptedException e) {
            // the interrupt reached a call to ZooKeeper: keep the flag for the core, which ends (or defers) the wait
            // and withdraws the place; a protected create it cut short is deleted by Curator in the background
            Thread.currentThread().interrupt();
            return new AcquireResult.Busy(null, -1, null);
        } catch (LockBackendException | LockClientClosedException e) {
            throw e;
        } catch (Exception e) {
            throw calls.failed("acquire of '" + name + "'", e);
        }
    }

    /**
     * A try-once with no place yet: busy, naming the head, if someone is in the line it would join; null if nobody
     * is, or the head left meanwhile (then it takes a place and reads the line as any acquisition).
     */
    private AcquireResult.Busy busyWithoutAPlace(AcquireRequest request, String parent) throws Exception {
        List<String> children = calls.children(parent);
        if (!Line.lineAhead(children, request.mode())) {
            return null;
        }
        return places.busy(parent, Line.standing(children, "", request.mode()).head());
    }

    /**
     * One look at the line from the request's place (taken now if it has none): a grant, a busy answer, or null when
     * the line changed under the read (look again).
     */
    private AcquireResult look(AcquireRequest request, String parent) throws Exception {
        Place place = placeInLine(request, parent);                      // (a) its sequential node, created once
        long lookedAt = place.heard.get();
        String mine = place.node.path.substring(parent.length() + 1);
        Stat line = new Stat();
        Line.Standing s = Line.standing(calls.children(parent, line), mine, request.mode()); // (b) its predecessor
        if (!s.present()) {
            return placeGone(request, place);                             // (c) its node is no longer in the line
        }
        if (s.holds()) {
            return grant(request, place, line);                           // (d) nobody it waits for: it holds
        }
        if (request.patience() == AcquireRequest.Patience.TRY_ONCE) {
            return leaveTheLine(request, place, parent, s);               // (e) a try-once does not wait
        }
        return places.waitBehind(place, parent, s, lookedAt);             // (f) watch the predecessor: busy
    }

    /** The request's place in line, created now (protected, ephemeral, sequential) if it has none. */
    private Place placeInLine(AcquireRequest request, String parent) throws Exception {
        Place place = places.get(request);
        long sessionNow = calls.currentSession();
        if (place != null && place.node.sessionId != sessionNow) {
            throw placeEndedWithItsSession(request, place);
        }
        if (place == null) {
            // a create that answers after the bound made a place nobody keeps: deleted then
            Node created = calls.bounded("acquire of '" + request.name() + "'",
                    () -> places.create(parent, request, sessionNow), deletes::deleteOwn);
            place = new Place(request.name(), request.owner(), created, () -> releases);
            places.put(request, place);
            if (closed) {
                // close() took its snapshot of the places before this one was kept: withdraw it here
                places.remove(request);
                calls.deleteQuietly(place.node.path);
                throw new LockClientClosedException("acquire of '" + request.name() + "': the lock client was"
                        + " closed (" + description() + ")");
            }
        }
        return place;
    }

    /**
     * The place's node is not in the line: it ended with its session (the acquisition fails), or was deleted under
     * its waiter by hand (null: the next look takes a new place).
     */
    private AcquireResult placeGone(AcquireRequest request, Place place) {
        if (place.node.sessionId != calls.currentSession()) {
            throw placeEndedWithItsSession(request, place); // Curator reconnected on a new session meanwhile
        }
        places.remove(request);
        return null;
    }

    /** The place holds: its node becomes the grant's, with the token the read that showed the grant gives. */
    private AcquireResult.Granted grant(AcquireRequest request, Place place, Stat line) {
        places.remove(request);
        long token = Line.token(request.mode(), place.node, line);
        held.granted(new LeaseKey(request.name(), request.owner(), token, request.mode()), place.node);
        return new AcquireResult.Granted(token);
    }

    /**
     * A try-once that does not hold: deletes its node and answers busy naming the head; null if the head left
     * meanwhile (the place is kept: read the line again).
     */
    private AcquireResult.Busy leaveTheLine(AcquireRequest request, Place place, String parent, Line.Standing s)
            throws Exception {
        AcquireResult.Busy busy = places.busy(parent, s.head());
        if (busy != null) {
            places.remove(request);
            deletes.now(place.node);
        }
        return busy;
    }

    /**
     * A waiter's node ended with its session, which the server may have made the holder meanwhile (a waiter paused or
     * cut off when its predecessor left): the acquisition fails saying so — never "not granted", and never a silent new
     * place at the back of the line.
     */
    private LockBackendException placeEndedWithItsSession(AcquireRequest request, Place place) {
        places.remove(request);
        return new LockBackendException(description(), "acquire of '" + request.name() + "': its place in line ended"
                + " with ZooKeeper session 0x" + Long.toHexString(place.node.sessionId) + " (expired while waiting);"
                + " the server may have made it the holder for as long as that session lived, which never reached"
                + " this client", null);
    }

    @Override
    public void withdraw(AcquireRequest request) {
        places.withdraw(request);
    }

    // ---- release, renew, confirm, lost ---------------------------------------------------------------------------

    @Override
    public boolean release(LeaseKey lease) {
        return held.release(lease, sessions.lostSession());
    }

    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        return held.renew(leases);
    }

    @Override
    public boolean confirm(LeaseKey lease) {
        return held.confirm(lease);
    }

    @Override
    public void lost(LeaseKey lease) {
        held.lost(lease, sessions.lostSession());
    }

    // ---- session -------------------------------------------------------------------------------------------

    private void stateChanged(ConnectionState state) {
        if (closed) {
            return;
        }
        try {
            sessions.changed(state, session, releases);
        } catch (RuntimeException e) {
            log.error("{}: handling connection state {} failed", description(), state, e);
        }
    }

    // ---- introspection -----------------------------------------------------------------------------------------

    /**
     * Deletes the member node that holds the exclusive lock {@code name} now (with {@code token}, only if its
     * {@code czxid} is that token), at the version it was read at.
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        return inspection.forceRelease(name, token);
    }

    @Override
    public List<LockInfo> inspect() {
        return inspection.inspect();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        client.getConnectionStateListenable().removeListener(stateListener);
        places.withdrawAll();
        calls.shutdown();
        if (ownsClient) {
            client.close();
        }
    }
}
