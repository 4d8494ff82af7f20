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
import dev.baton.spi.LockMode;
import dev.baton.spi.NotifiesReleases;
import dev.baton.spi.ReadWriteModes;
import dev.baton.spi.ReleaseListener;
import dev.baton.spi.ReportsSessionState;
import dev.baton.spi.WaitingQueue;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

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
 *       parent's {@code pzxid} in the read that showed the grant (see {@link #token}); no watch of its own (the
 *       renewal reads its node). Not
 *       holding: a data watch on the one member it waits for (its predecessor; a reader, the nearest writer ahead),
 *       which wakes the core's waiter when it changes — no herd; and {@link AcquireResult.Busy} names the head of the
 *       line (from the watch's own read when the member it waits for is the head; a waiter further back does not
 *       name it). Until the watch fires or the connection comes back, every further attempt of that waiter answers
 *       from that look without a request (the core's safety-net poll costs the server nothing). A try-once that does
 *       not hold deletes its node before answering; a try-once that finds members ahead of it in the children never
 *       creates
 *       one.</li>
 *   <li>Release deletes the node. Renewal is one read-only {@code multi} per {@value #RENEW_BATCH} leases (fewer
 *       when their paths are long: a request and its answer stay under 256 KB; ZooKeeper 3.6+): each
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
 */
final class ZooKeeperLockBackend implements AnnouncesTurns, ReadWriteModes, ReportsSessionState, ClearsLostGrants {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
    /** Held nodes read by one renewal request (a read-only multi), at most. */
    static final int RENEW_BATCH = 1_000;
    /**
     * Estimated bytes of one renewal request and its answer, at most (a long lock name encodes to up to 12 bytes per
     * code point): well under ZooKeeper's default {@code jute.maxbuffer} of 1 MB, whatever the names.
     */
    static final long RENEW_BATCH_BYTES = 256 * 1024;
    /** Bound on re-reading the line in one attempt when the member it looked at vanished meanwhile. */
    private static final int MAX_REREADS = 50;

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final String root;
    private final String description;
    /** Waiting places by the request object that keeps them (identity, as the SPI promises one object). */
    private final Map<AcquireRequest, Place> places = Collections.synchronizedMap(new IdentityHashMap<>());
    /** Granted nodes by grant. */
    private final ConcurrentHashMap<LeaseKey, Node> held = new ConcurrentHashMap<>();
    /** Released nodes whose delete could not reach the server: deleted when the session's connection returns. */
    private final Set<Node> pendingDeletes = ConcurrentHashMap.newKeySet();
    private final ConnectionStateListener stateListener = (c, state) -> stateChanged(state);
    private volatile ReleaseListener releases;
    private volatile ReportsSessionState.Listener session;
    /** The session this client's nodes live in; 0 before start. */
    private volatile long knownSession;
    /** The session whose loss was reported (so it is reported once). */
    private volatile long lostSession;
    private volatile boolean closed;
    /**
     * Runs the blocking Curator calls of acquire, release, check and withdrawal, so their caller waits at most the
     * connection timeout for an answer (Curator's own retries wait that long for a connection per retry).
     */
    private final ExecutorService calls = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "baton-zookeeper-call");
        t.setDaemon(true);
        return t;
    });

    /** A member node of this client: its path, its czxid (an exclusive grant's token) and its session. */
    static final class Node {
        final String path;
        final long czxid;
        final long sessionId;
        /** Seen deleted (a renewal found it missing) or ended with its session. */
        volatile boolean gone;

        Node(String path, long czxid, long sessionId) {
            this.path = path;
            this.czxid = czxid;
            this.sessionId = sessionId;
        }
    }

    /**
     * A waiter's place: its node, the predecessor it watches (one watch at a time), and the busy answer of the look
     * that left the watch armed. While nothing was heard since that look ({@link #heard} unchanged), the line ahead
     * is as it was, and an attempt answers from it without a request: the watch, or a reconnection, wakes the waiter.
     */
    private final class Place implements Watcher {
        final String name;
        final String owner;
        final Node node;
        volatile String watching;
        /** Counts what may have changed the line since a look: the watch fired, or the connection came back. */
        final java.util.concurrent.atomic.AtomicLong heard = new java.util.concurrent.atomic.AtomicLong();
        /** The answer of the last look that left the watch armed, valid while {@link #heard} is {@link #answeredAt}. */
        volatile AcquireResult.Busy answer;
        volatile long answeredAt = -1;

        Place(String name, String owner, Node node) {
            this.name = name;
            this.owner = owner;
            this.node = node;
        }

        /** The answer kept from the look that armed the watch, if nothing was heard since; else null. */
        AcquireResult.Busy unchanged() {
            AcquireResult.Busy a = answer;
            return a != null && watching != null && answeredAt == heard.get() ? a : null;
        }

        /** Keeps {@code busy} as the answer while nothing is heard after the look that began at {@code lookedAt}. */
        AcquireResult.Busy keep(AcquireResult.Busy busy, long lookedAt) {
            answer = busy;
            answeredAt = lookedAt;
            return busy;
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                return; // a connection state change: reported through Curator's listener
            }
            heard.incrementAndGet();
            watching = null;
            ReleaseListener l = releases;
            if (l != null) {
                l.released(name, owner); // its predecessor left: only this waiter's turn may have come
            }
        }
    }

    ZooKeeperLockBackend(CuratorFramework client, boolean ownsClient, String root, String endpoint) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.root = root;
        this.description = "zookeeper (" + endpoint + ", root " + root + ")";
    }

    @Override
    public String description() {
        return description;
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
        knownSession = currentSession();
        client.getConnectionStateListenable().addListener(stateListener);
    }

    // ---- paths and calls -------------------------------------------------------------------------------------

    private String parent(String name) {
        return root + "/" + ZooKeeperNames.encode(name);
    }

    private long currentSession() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            throw failed("reading the session id", e);
        }
    }

    private boolean connected() {
        return client.getZookeeperClient().isConnected();
    }

    private void requireConnected(String what) {
        if (!connected()) {
            throw new LockBackendException(description, what + " refused: not connected to ZooKeeper (the session"
                    + " is suspended until the connection returns, or expires)", null);
        }
    }

    /** A backend exception for a failed call; an interrupted call keeps the thread's interrupt flag. */
    private LockBackendException failed(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return new LockBackendException(description, what + " failed: " + e, e);
    }

    /** A blocking Curator call. */
    private interface Call<T> {
        T run() throws Exception;
    }

    /**
     * Runs {@code call} and waits for its answer at most the Curator client's connection timeout: the bound of every
     * request, whatever the network does. Without an answer by then it throws, and the call goes on in the
     * background; {@code late} (if any) gets a result that comes after. An interrupted wait abandons it the same way.
     */
    private <T> T bounded(String what, Call<T> call, Consumer<T> late) throws Exception {
        CompletableFuture<T> answer = new CompletableFuture<>();
        calls.execute(() -> {
            try {
                T result = call.run();
                if (!answer.complete(result) && late != null && result != null) {
                    late.accept(result);
                }
            } catch (Throwable e) {
                answer.completeExceptionally(e);
            }
        });
        long bound = client.getZookeeperClient().getConnectionTimeoutMs();
        try {
            return answer.get(bound, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } catch (TimeoutException | InterruptedException e) {
            if (!answer.completeExceptionally(e)) {
                return answer.join(); // answered just now
            }
            if (e instanceof InterruptedException) {
                throw e;
            }
            throw new LockBackendException(description, what + ": no answer from ZooKeeper within " + bound
                    + " ms (the connection timeout); " + (connected() ? "the connection looks open, the network may"
                    + " be cut" : "not connected"), null);
        }
    }

    private static String owner(byte[] data) {
        return data == null ? null : new String(data, StandardCharsets.UTF_8);
    }

    // ---- acquire -----------------------------------------------------------------------------------------------

    /** What one reading of the line decided for a member. */
    private record Standing(boolean holds, ZooKeeperNames.Member waitFor, ZooKeeperNames.Member head,
                            boolean present) {
    }

    /** The member's standing in its line, from the parent's children. */
    private static Standing standing(List<String> children, String mine, LockMode mode) {
        boolean rw = mode != LockMode.EXCLUSIVE;
        List<ZooKeeperNames.Member> line = new ArrayList<>();
        for (String child : children) {
            ZooKeeperNames.member(child).filter(m -> m.readWrite() == rw).ifPresent(line::add);
        }
        line.sort(Comparator.comparingLong(ZooKeeperNames.Member::sequence));
        int at = -1;
        for (int i = 0; i < line.size(); i++) {
            if (line.get(i).node().equals(mine)) {
                at = i;
                break;
            }
        }
        ZooKeeperNames.Member head = line.isEmpty() ? null : line.get(0);
        if (at < 0) {
            return new Standing(false, null, head, false);
        }
        if (mode == LockMode.READ) {
            for (int i = at - 1; i >= 0; i--) {
                if (line.get(i).mode() == LockMode.WRITE) {
                    return new Standing(false, line.get(i), head, true);
                }
            }
            return new Standing(true, null, head, true);
        }
        return at == 0 ? new Standing(true, null, head, true) : new Standing(false, line.get(at - 1), head, true);
    }

    /** Whether a try-once would certainly wait: someone is in the line it would join, ahead of any new member. */
    private static boolean lineAhead(List<String> children, LockMode mode) {
        for (String child : children) {
            Optional<ZooKeeperNames.Member> m = ZooKeeperNames.member(child);
            if (m.isPresent()) {
                LockMode other = m.get().mode();
                boolean blocks = switch (mode) {
                    case EXCLUSIVE -> other == LockMode.EXCLUSIVE;
                    case WRITE -> other != LockMode.EXCLUSIVE;
                    case READ -> other == LockMode.WRITE;
                };
                if (blocks) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * One attempt, in steps: (1) a waiter whose watch is armed and who heard nothing since its last look answers from
     * that look, without a request; (2) a try-once that sees members ahead of it answers busy without taking a place;
     * (3) {@link #look} at the line from the waiter's place, again if the line changed under the read.
     */
    @Override
    public AcquireResult tryAcquire(AcquireRequest request) {
        String name = request.name();
        String parent = parent(name);
        try {
            Place kept = places.get(request);
            AcquireResult.Busy unchanged = kept == null ? null : kept.unchanged();
            if (unchanged != null) {
                return unchanged;                                                           // step 1
            }
            if (request.patience() == AcquireRequest.Patience.TRY_ONCE && kept == null) {
                List<String> children = children(parent);                                  // step 2
                if (lineAhead(children, request.mode())) {
                    AcquireResult.Busy busy = busy(parent, standing(children, "", request.mode()).head());
                    if (busy != null) {
                        return busy;
                    }
                    // the head left meanwhile: take a place and read the line as any acquisition
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
            throw failed("acquire of '" + name + "'", e);
        }
    }

    /**
     * One look at the line from the request's place (taken now if it has none): a grant, a busy answer, or null when
     * the line changed under the read (look again).
     */
    private AcquireResult look(AcquireRequest request, String parent) throws Exception {
        Place place = place(request, parent);
        long lookedAt = place.heard.get();
        String mine = place.node.path.substring(parent.length() + 1);
        Stat line = new Stat();
        Standing s = standing(children(parent, line), mine, request.mode());
        if (!s.present()) {
            if (place.node.sessionId != currentSession()) {
                throw placeEndedWithItsSession(request, place); // Curator reconnected on a new session meanwhile
            }
            places.remove(request); // deleted under us by hand: take a new place
            return null;
        }
        if (s.holds()) {
            places.remove(request);
            long token = token(request.mode(), place.node, line);
            held.put(new LeaseKey(request.name(), request.owner(), token, request.mode()), place.node);
            return new AcquireResult.Granted(token);
        }
        if (request.patience() == AcquireRequest.Patience.TRY_ONCE) {
            AcquireResult.Busy busy = busy(parent, s.head());
            if (busy != null) {
                places.remove(request);
                deleteQuietly(place.node.path, place.node);
            }
            return busy; // null: the head left meanwhile, read the line again
        }
        return waitBehind(place, parent, s, lookedAt);
    }

    /** The request's place in line, created now (protected, ephemeral, sequential) if it has none. */
    private Place place(AcquireRequest request, String parent) throws Exception {
        Place place = places.get(request);
        long sessionNow = currentSession();
        if (place != null && place.node.sessionId != sessionNow) {
            throw placeEndedWithItsSession(request, place);
        }
        if (place == null) {
            // a create that answers after the bound made a place nobody keeps: deleted then
            Node created = bounded("acquire of '" + request.name() + "'", () -> create(parent, request, sessionNow),
                    this::deleteOwn);
            place = new Place(request.name(), request.owner(), created);
            places.put(request, place);
            if (closed) {
                // close() took its snapshot of the places before this one was kept: withdraw it here
                places.remove(request);
                deleteQuietly(place.node.path);
                throw new LockClientClosedException("acquire of '" + request.name() + "': the lock client was"
                        + " closed (" + description + ")");
            }
        }
        return place;
    }

    /**
     * A waiter not first in its line: arms its one watch on the member it waits for (unless armed on it already) and
     * answers busy, kept as the answer of every attempt until something is heard; null if that member left meanwhile.
     */
    private AcquireResult.Busy waitBehind(Place place, String parent, Standing s, long lookedAt) throws Exception {
        String predecessor = parent + "/" + s.waitFor().node();
        if (predecessor.equals(place.watching)) {
            // a look after a reconnection: the client set the watch again on the server; name the holder anew
            AcquireResult.Busy busy = busy(parent, s.head());
            return busy == null ? null : place.keep(busy, lookedAt);
        }
        // a data watch, as Curator's recipe: on a node that left meanwhile it fails with NONODE and leaves no watch
        // behind (an exists watch would stay on the server for a path that never comes back)
        Stat stat = new Stat();
        byte[] data;
        try {
            data = bounded("acquire of '" + place.name + "'",
                    () -> client.getData().storingStatIn(stat).usingWatcher(place).forPath(predecessor), null);
        } catch (KeeperException.NoNodeException e) {
            return null; // it left meanwhile: read the line again
        }
        place.watching = predecessor; // only once the watch is armed
        if (place.heard.get() != lookedAt) {
            place.watching = null; // it fired already (its wake-up is on the board): the next attempt looks again
        }
        // the same read names the holder when the member waited for is the head; a waiter further back does not spend
        // a read on it (a wait that times out says "held by another client")
        return place.keep(s.waitFor().equals(s.head()) ? busyOf(s.head(), data, stat) : UNNAMED_HOLDER, lookedAt);
    }

    /**
     * A waiter's node ended with its session, which the server may have made the holder meanwhile (a waiter paused or
     * cut off when its predecessor left): the acquisition fails saying so — never "not granted", and never a silent new
     * place at the back of the line.
     */
    private LockBackendException placeEndedWithItsSession(AcquireRequest request, Place place) {
        places.remove(request);
        return new LockBackendException(description, "acquire of '" + request.name() + "': its place in line ended"
                + " with ZooKeeper session 0x" + Long.toHexString(place.node.sessionId) + " (expired while waiting);"
                + " the server may have made it the holder for as long as that session lived, which never reached"
                + " this client", null);
    }

    private List<String> children(String parent) throws Exception {
        return children(parent, new Stat());
    }

    /** The parent's children, and its stat in {@code stat} (left as is if the parent does not exist). */
    private List<String> children(String parent, Stat stat) throws Exception {
        try {
            return bounded("reading the line of " + parent, () -> client.getChildren().storingStatIn(stat)
                    .forPath(parent), null);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /**
     * The fencing token of a grant seen in the read that showed {@code line} (the parent's stat). An exclusive
     * member holds from its create on, or from its predecessor's delete, in line order: its {@code czxid}. A member of
     * a read-write line may be granted together with others (readers behind one writer) and learn of it late: its
     * token is the zxid of the line's last change when its grant was seen (the parent's {@code pzxid}, at least its
     * own {@code czxid}), so it is never lower than a grant the server answered before, and a writer, seen only after
     * every member ahead of it was deleted, gets a token above all of theirs. Readers that hold together may share one.
     */
    private static long token(LockMode mode, Node node, Stat line) {
        return mode == LockMode.EXCLUSIVE ? node.czxid : Math.max(node.czxid, line.getPzxid());
    }

    /**
     * Creates the member node: protected, ephemeral, sequential, the owner as data, parents as containers. Its
     * czxid comes from the create's stat, or (a protected create Curator recovered after a connection loss) from
     * one {@code exists}.
     */
    private Node create(String parent, AcquireRequest request, long sessionBefore) throws Exception {
        Stat stat = new Stat();
        String path = client.create().storingStatIn(stat).creatingParentContainersIfNeeded().withProtection()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(parent + "/" + ZooKeeperNames.prefix(request.mode()),
                        request.owner().getBytes(StandardCharsets.UTF_8));
        if (stat.getCzxid() == 0) {
            Stat found = client.checkExists().forPath(path);
            if (found == null) {
                throw new LockBackendException(description, "acquire of '" + request.name() + "': the node "
                        + path + " Curator recovered after a connection loss is gone", null);
            }
            stat = found;
        }
        if (stat.getEphemeralOwner() != sessionBefore && stat.getEphemeralOwner() != currentSession()) {
            deleteQuietly(path);
            throw new LockBackendException(description, "acquire of '" + request.name() + "': the session changed"
                    + " while its node was created", null);
        }
        return new Node(path, stat.getCzxid(), stat.getEphemeralOwner());
    }

    /** A busy answer that names no holder ("held by another client" if the wait ends in a timeout). */
    private static final AcquireResult.Busy UNNAMED_HOLDER = new AcquireResult.Busy(null, -1, null);

    /** The busy answer naming the head of the line, or null if the head left meanwhile. */
    private AcquireResult.Busy busy(String parent, ZooKeeperNames.Member head) throws Exception {
        if (head == null) {
            return null;
        }
        Stat stat = new Stat();
        try {
            byte[] data = bounded("reading the head of " + parent,
                    () -> client.getData().storingStatIn(stat).forPath(parent + "/" + head.node()), null);
            return busyOf(head, data, stat);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /**
     * The busy answer naming the head of a line from its node's data and stat: with its token if that is its
     * {@code czxid} (an exclusive member); a read-write member's token was fixed when its grant was seen, by its client.
     */
    private static AcquireResult.Busy busyOf(ZooKeeperNames.Member head, byte[] data, Stat stat) {
        return new AcquireResult.Busy(owner(data), head.mode() == LockMode.EXCLUSIVE ? stat.getCzxid() : -1, null);
    }

    private void deleteQuietly(String path) {
        deleteQuietly(path, null);
    }

    /**
     * Deletes a node, waiting for the answer at most the connection timeout; a node of this client ({@code node} not
     * null) that could not be deleted is deleted when the connection returns on its session.
     */
    private void deleteQuietly(String path, Node node) {
        boolean interrupted = Thread.interrupted();
        try {
            bounded("deleting " + path, () -> client.delete().forPath(path), null);
        } catch (KeeperException.NoNodeException e) {
            // already gone
        } catch (Exception e) {
            if (node != null) {
                pendingDeletes.add(node);
            }
            log.debug("could not delete {} now; it goes when the connection returns, or with its session", path, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void withdraw(AcquireRequest request) {
        Place place = places.remove(request);
        if (place != null) {
            deleteQuietly(place.node.path, place.node);
            unwatch(place);
        }
    }

    /** Removes a withdrawn waiter's watch on its predecessor, locally (the server drops it when it fires or goes). */
    private void unwatch(Place place) {
        String watching = place.watching;
        if (watching == null) {
            return;
        }
        try {
            client.watchers().remove(place).ofType(Watcher.WatcherType.Any).locally().forPath(watching);
        } catch (Exception e) {
            log.debug("could not remove the watch on {}; it goes when that node does", watching, e);
        }
    }

    // ---- release, renew, confirm -------------------------------------------------------------------------------

    @Override
    public boolean release(LeaseKey lease) {
        Node node = held.get(lease);
        if (node == null) {
            return false;
        }
        if (node.gone || node.sessionId == lostSession) {
            held.remove(lease, node); // deleted under us, or ended with its session
            return false;
        }
        if (connected() && node.sessionId != currentSession()) {
            // an older session's node (a node of the live session is deleted below, even one granted before the
            // connection listener learned of that session)
            held.remove(lease, node);
            return false;
        }
        if (!connected()) {
            held.remove(lease, node);
            pendingDeletes.add(node);
            throw new LockBackendException(description, "release of '" + lease.name() + "' (token " + lease.token()
                    + ") could not reach ZooKeeper: its node is deleted when the connection returns, or ends with"
                    + " the session", null);
        }
        try {
            bounded("release of '" + lease.name() + "' (token " + lease.token() + ")",
                    () -> client.delete().forPath(node.path), null);
            held.remove(lease, node);
            return true;
        } catch (KeeperException.NoNodeException e) {
            held.remove(lease, node);
            return false;
        } catch (Exception e) {
            held.remove(lease, node);
            pendingDeletes.add(node);
            throw failed("release of '" + lease.name() + "' (token " + lease.token() + "); its node is deleted when"
                    + " the connection returns, or ends with the session", e);
        }
    }

    @Override
    public Set<LeaseKey> renew(Collection<LeaseKey> leases, Duration leaseTime) {
        if (leases.isEmpty()) {
            return Set.of();
        }
        requireConnected("renewal of " + leases.size() + " lease(s)");
        long sessionNow = currentSession();
        List<LeaseKey> keys = new ArrayList<>();
        List<Node> nodes = new ArrayList<>();
        for (LeaseKey k : leases) {
            Node n = held.get(k);
            if (n != null && n.sessionId == sessionNow && !n.gone) {
                keys.add(k);
                nodes.add(n);
            }
        }
        Set<LeaseKey> out = new HashSet<>();
        try {
            // read-only multis (ZooKeeper 3.6+): each node is shown (on this session, with the lease's czxid) or not,
            // independently; the server answers only on a live session. The raw handle does not add the Curator
            // client's namespace, so the paths get it here.
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            String namespace = client.getNamespace();
            int from = 0;
            while (from < nodes.size()) {
                List<Op> reads = new ArrayList<>();
                long bytes = 0;
                int to = from;
                while (to < nodes.size() && reads.size() < RENEW_BATCH
                        && (reads.isEmpty() || bytes < RENEW_BATCH_BYTES)) {
                    String path = ZKPaths.fixForNamespace(namespace, nodes.get(to).path);
                    reads.add(Op.getData(path));
                    // request: the path; answer: the data (the owner) and a stat
                    bytes += 2L * path.length() + 3L * keys.get(to).owner().length() + 128;
                    to++;
                }
                List<OpResult> results = zk.multi(reads);
                for (int i = from; i < to; i++) {
                    OpResult r = results.get(i - from);
                    if (r instanceof OpResult.GetDataResult data && data.getStat().getEphemeralOwner() == sessionNow
                            && data.getStat().getCzxid() == nodes.get(i).czxid) {
                        out.add(keys.get(i));
                    } else if (r instanceof OpResult.ErrorResult error
                            && error.getErr() == KeeperException.Code.NONODE.intValue()) {
                        nodes.get(i).gone = true; // deleted by hand, or by an operator's forced release
                    }
                }
                from = to;
            }
        } catch (Exception e) {
            throw failed("renewal of " + leases.size() + " lease(s)", e);
        }
        if (currentSession() != sessionNow) {
            throw new LockBackendException(description, "renewal of " + leases.size() + " lease(s): the session"
                    + " changed during the check", null);
        }
        return out;
    }

    @Override
    public boolean confirm(LeaseKey lease) {
        Node n = held.get(lease);
        if (n == null) {
            return false;
        }
        requireConnected("check of '" + lease.name() + "'");
        try {
            Stat stat = bounded("check of '" + lease.name() + "'", () -> client.checkExists().forPath(n.path), null);
            return stat != null && stat.getEphemeralOwner() == currentSession() && stat.getCzxid() == n.czxid;
        } catch (LockBackendException e) {
            throw e;
        } catch (Exception e) {
            throw failed("check of '" + lease.name() + "'", e);
        }
    }

    @Override
    public void lost(LeaseKey lease) {
        Node node = held.get(lease);
        if (node != null && !node.gone && node.sessionId != lostSession) {
            deleteOwn(node);
        }
    }

    /**
     * Deletes a node of this client in the background (no wait): only if the server shows it on the session it was
     * created in with its {@code czxid}, at the version read. If the server cannot be reached, the node is deleted when
     * the connection returns on that session ({@link #retryPendingDeletes}); a session that ends deletes it anyway.
     */
    private void deleteOwn(Node node) {
        try {
            client.checkExists().inBackground((c, read) -> {
                Stat stat = read.getStat();
                if (read.getResultCode() == KeeperException.Code.NONODE.intValue() || (read.getResultCode()
                        == KeeperException.Code.OK.intValue() && (stat == null || stat.getEphemeralOwner()
                        != node.sessionId || stat.getCzxid() != node.czxid))) {
                    node.gone = true; // gone already (or not ours: never touched)
                } else if (read.getResultCode() != KeeperException.Code.OK.intValue()) {
                    pendingDeletes.add(node);
                } else {
                    c.delete().withVersion(stat.getVersion()).inBackground((c2, deleted) -> {
                        if (deleted.getResultCode() == KeeperException.Code.OK.intValue()
                                || deleted.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                            node.gone = true;
                            log.info("{}: deleted node {} of a lease lost while its session lived", description,
                                    node.path);
                        } else {
                            pendingDeletes.add(node);
                        }
                    }).forPath(node.path);
                }
            }).forPath(node.path);
        } catch (Exception e) {
            pendingDeletes.add(node);
        }
    }

    // ---- session -------------------------------------------------------------------------------------------

    private void stateChanged(ConnectionState state) {
        if (closed) {
            return;
        }
        try {
            onState(state);
        } catch (RuntimeException e) {
            log.error("{}: handling connection state {} failed", description, state, e);
        }
    }

    private void onState(ConnectionState state) {
        ReportsSessionState.Listener s = session;
        ReleaseListener r = releases;
        switch (state) {
            case SUSPENDED -> {
                log.debug("{}: connection suspended", description);
                s.suspended();
            }
            case RECONNECTED -> {
                long now = currentSession();
                if (now == knownSession) {
                    log.debug("{}: reconnected on session 0x{}", description, Long.toHexString(now));
                    retryPendingDeletes();
                    s.resumed();
                } else {
                    sessionEnded(s);
                    knownSession = now;
                    log.info("{}: connected on a new session 0x{}", description, Long.toHexString(now));
                }
                heardAll(); // watches may have fired unseen: every waiter looks at its line again, once
                if (r != null) {
                    r.resynchronize();
                }
            }
            case LOST -> {
                sessionEnded(s);
                heardAll();
                if (r != null) {
                    r.resynchronize();
                }
            }
            default -> {
                // CONNECTED comes before start; READ_ONLY is never asked for
            }
        }
    }

    /** Something may have changed every line unseen (a reconnection): no waiter answers from its last look. */
    private void heardAll() {
        synchronized (places) {
            places.values().forEach(p -> p.heard.incrementAndGet());
        }
    }

    /** The known session ended: its nodes are gone on the server; report it once. */
    private void sessionEnded(ReportsSessionState.Listener s) {
        long ended = knownSession;
        if (lostSession == ended) {
            return;
        }
        lostSession = ended;
        log.warn("{}: session 0x{} ended (expired); every lease held on it is lost", description,
                Long.toHexString(ended));
        held.values().stream().filter(n -> n.sessionId == ended).forEach(n -> n.gone = true);
        pendingDeletes.clear();
        s.sessionLost();
    }

    private void retryPendingDeletes() {
        for (Node n : List.copyOf(pendingDeletes)) {
            pendingDeletes.remove(n);
            if (n.sessionId == knownSession) {
                deleteOwn(n);
            }
        }
    }

    // ---- introspection -----------------------------------------------------------------------------------------

    /**
     * Deletes the member node that holds the exclusive lock {@code name} now (with {@code token}, only if its
     * {@code czxid} is that token), at the version it was read at.
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        String parent = parent(name);
        try {
            List<String> children = children(parent);
            for (String child : children) {
                Optional<ZooKeeperNames.Member> m = ZooKeeperNames.member(child);
                if (m.isEmpty() || m.get().mode() != LockMode.EXCLUSIVE
                        || !standing(children, child, LockMode.EXCLUSIVE).holds()) {
                    continue;
                }
                Stat stat = new Stat();
                byte[] data;
                try {
                    data = client.getData().storingStatIn(stat).forPath(parent + "/" + child);
                    if (token.isPresent() && stat.getCzxid() != token.getAsLong()) {
                        return Optional.empty();
                    }
                    client.delete().withVersion(stat.getVersion()).forPath(parent + "/" + child);
                } catch (KeeperException.NoNodeException e) {
                    return Optional.empty(); // released meanwhile
                }
                return Optional.of(new ForcedRelease(name, owner(data), stat.getCzxid(), null));
            }
            return Optional.empty();
        } catch (Exception e) {
            throw failed("force release of '" + name + "'", e);
        }
    }

    /**
     * A holding member's token as {@link #inspect} shows it: an exclusive member's {@code czxid}; a read-write
     * member's token is known only to its client (fixed when its grant was seen): this client's own, else -1.
     */
    private long tokenOf(ZooKeeperNames.Member member, String path, Stat stat) {
        if (member.mode() == LockMode.EXCLUSIVE) {
            return stat.getCzxid();
        }
        for (Map.Entry<LeaseKey, Node> e : held.entrySet()) {
            if (e.getValue().path.equals(path) && e.getValue().czxid == stat.getCzxid()) {
                return e.getKey().token();
            }
        }
        return -1;
    }

    @Override
    public List<LockInfo> inspect() {
        List<LockInfo> out = new ArrayList<>();
        try {
            for (String lock : children(root)) {
                Optional<String> name = ZooKeeperNames.decode(lock);
                if (name.isEmpty()) {
                    continue;
                }
                String parent = root + "/" + lock;
                List<String> children = children(parent);
                for (String child : children) {
                    Optional<ZooKeeperNames.Member> m = ZooKeeperNames.member(child);
                    if (m.isEmpty() || !standing(children, child, m.get().mode()).holds()) {
                        continue;
                    }
                    Stat stat = new Stat();
                    try {
                        String path = parent + "/" + child;
                        byte[] data = client.getData().storingStatIn(stat).forPath(path);
                        out.add(new LockInfo(name.get(), owner(data), tokenOf(m.get(), path, stat),
                                Instant.ofEpochMilli(stat.getCtime()), null, true));
                    } catch (KeeperException.NoNodeException e) {
                        // released meanwhile
                    }
                }
            }
        } catch (Exception e) {
            throw failed("listing the locks under " + root, e);
        }
        return out;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        client.getConnectionStateListenable().removeListener(stateListener);
        List<Place> toWithdraw;
        synchronized (places) {
            toWithdraw = new ArrayList<>(places.values());
            places.clear();
        }
        // every place's delete at once; closing waits for their answers at most one connection timeout in all
        List<CompletableFuture<Void>> deletes = new ArrayList<>();
        for (Place p : toWithdraw) {
            deletes.add(CompletableFuture.runAsync(() -> {
                try {
                    client.delete().forPath(p.node.path);
                } catch (Exception e) {
                    log.debug("could not delete {} while closing; it ends with its session", p.node.path, e);
                }
            }, calls));
        }
        boolean interrupted = Thread.interrupted();
        try {
            CompletableFuture.allOf(deletes.toArray(new CompletableFuture[0]))
                    .get(client.getZookeeperClient().getConnectionTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            log.debug("{}: closing without the answer to every withdrawal; a node left ends with its session",
                    description, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        calls.shutdown();
        if (ownsClient) {
            client.close();
        }
    }
}
