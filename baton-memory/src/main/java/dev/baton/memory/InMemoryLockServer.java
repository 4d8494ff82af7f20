package dev.baton.memory;

import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.ReleaseListener;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * A lock server inside this JVM with the semantics of Baton's lease strategy, for unit tests without a server.
 * Create one per test; every client built on it with {@link InMemoryLocks#builder} stands for a process of its
 * own, so several clients on one server contend as several processes would on one database.
 *
 * <p><b>What it keeps</b>, per lock name (a plain lock and a read-write lock of the same name are separate locks,
 * as on the real backends):
 * <ul>
 *   <li><b>Grants</b>, like lease rows: owner (client id and thread), fencing token, acquisition time and expiry by
 *       <em>this server's</em> clock. A grant ends when it is released or when its expiry passes without renewal.
 *       Release, renewal and confirmation act only where name, owner, token and mode all match, so a holder
 *       whose lease ran out can neither release nor extend its successor's grant. Fencing tokens come from one
 *       counter per server, drawn at grant time: every grant's token is greater than every earlier grant's, of
 *       any lock, across expiry and takeover.</li>
 *   <li><b>A line of waiters</b>, first come first served. A waiting acquisition that finds the lock busy takes a
 *       place at the end of the line and keeps it across its attempts; a free lock goes only to the head of the
 *       line, so nobody barges past a waiter (not even a {@code tryAcquire()}, which takes no place). A read
 *       request passes the readers ahead of it but no writer, so a waiting writer holds back new readers.
 *       A place ends when its waiter is granted or withdraws (timeout, interrupt, close of its client), or —
 *       if its client crashed or was cut off — one lease time after the server last heard from that client.
 *       A place of a live client that forgets to withdraw would block the line for good: that is the bug a
 *       waiting queue must not have, and the core's wait loop is tested against it here.</li>
 * </ul>
 * Every release, withdrawal, close and expiry the server notices wakes every reachable client's waiters for
 * that name (a broadcast, like PostgreSQL's {@code NOTIFY}); only the head of the line can then take the lock.
 * A lease that simply runs out wakes nobody: waiters retry when the holder's lease, as the server reported it,
 * ends.
 *
 * <p><b>Faults</b>, for tests of what an application does when things go wrong: {@link #cutOff} (the client's
 * calls fail with {@link LockBackendException} until restored, so its leases run out), {@link #crash} (the
 * client vanishes without releasing: its grants and places end one lease time later) and {@link #expire} (a
 * lease runs out now). A grant is a record, not a session: nothing is lost when a client's connections die,
 * exactly as with the JDBC lease strategy.
 *
 * <p><b>What it does not simulate</b>: a network (a call reaches the server whole or fails at once; nothing hangs,
 * times out or half-succeeds), real process death (a crashed client's threads run on until it is closed; nothing
 * they send reaches the server), server restarts, or clocks that disagree (one clock serves every client).
 *
 * <p>Thread safety: every method may be called from any thread. One monitor serialises every decision, as a row
 * lock serialises the statements on one lease row; no call blocks while holding it, and notifications are
 * delivered after it is released.
 */
public final class InMemoryLockServer {
    private final Clock clock;
    private final String description;
    /** Guards every field below: each operation is one atomic decision, as one statement is on a database. */
    private final Object mutex = new Object();
    private final Map<LockId, LockState> locks = new HashMap<>();
    /** Connected clients by client id; a closed client is removed. */
    private final Map<String, Link> links = new HashMap<>();
    private long lastToken;

    private InMemoryLockServer(Clock clock) {
        this.clock = clock;
        this.description = "in-memory (server " + Integer.toHexString(System.identityHashCode(this)) + ")";
    }

    /** A server whose lease expiry follows the system clock (UTC). */
    public static InMemoryLockServer create() {
        return create(Clock.systemUTC());
    }

    /**
     * A server whose lease expiry follows {@code clock}: give a clock your test advances by hand, and leases end
     * exactly when it says. (Clients keep their own local deadlines by real time, as a real client would.)
     *
     * @throws IllegalArgumentException if {@code clock} is null
     */
    public static InMemoryLockServer create(Clock clock) {
        if (clock == null) {
            throw new IllegalArgumentException("clock must not be null");
        }
        return new InMemoryLockServer(clock);
    }

    /** The clock that decides when leases end. */
    public Clock clock() {
        return clock;
    }

    /** A description such as {@code in-memory (server 1b6d3586)}, as the clients' {@code backend()} reports it. */
    public String description() {
        return description;
    }

    /** Restores a client that {@link #cutOff} cut off. Closing it twice is harmless. */
    public interface CutOff extends AutoCloseable {
        /** Reconnects the client (unless it was cut off more than once and another cut is still open). */
        @Override
        void close();
    }

    /**
     * Cuts {@code client} off from the server until the returned handle is closed: every call it makes fails with
     * {@link LockBackendException}, it hears no releases, so its renewals fail and its leases run out by the
     * server's clock; its places in line end one lease time after the cut. Cuts nest.
     *
     * @throws IllegalArgumentException if {@code client} is not a connected client of this server
     */
    public CutOff cutOff(LockClient client) {
        Link link;
        synchronized (mutex) {
            link = linkOf(client);
            link.cuts++;
            if (link.silentSince == null) {
                link.silentSince = clock.instant();
            }
        }
        AtomicBoolean restored = new AtomicBoolean();
        return () -> {
            if (restored.compareAndSet(false, true)) {
                restore(link);
            }
        };
    }

    private void restore(Link link) {
        Set<String> freed = new HashSet<>();
        List<ReleaseListener> wake;
        boolean reconnected = false;
        synchronized (mutex) {
            link.cuts--;
            if (link.cuts == 0 && !link.crashed && !link.closed) {
                // places that ran out while the client was silent stay gone; the others are its own again
                Instant now = clock.instant();
                for (Map.Entry<LockId, LockState> e : locks.entrySet()) {
                    if (e.getValue().line.values().removeIf(p -> p.link == link && p.endedAt(now))) {
                        freed.add(e.getKey().name());
                    }
                }
                link.silentSince = null;
                reconnected = true;
            }
            wake = freed.isEmpty() ? List.of() : reachableListeners();
        }
        freed.forEach(name -> wake.forEach(l -> l.released(name)));
        if (reconnected && link.listener != null) {
            link.listener.resynchronize(); // its notifications may have been missed while cut off
        }
    }

    /**
     * Crashes {@code client}: from now on nothing it does reaches the server (its calls fail with
     * {@link LockBackendException}) and it hears nothing, as if its process had died with {@code kill -9}. Its
     * grants stay until their leases run out; its places in line end one lease time after the crash. Close the
     * client afterwards to stop its threads; the close releases nothing.
     *
     * @throws IllegalArgumentException if {@code client} is not a connected client of this server
     */
    public void crash(LockClient client) {
        synchronized (mutex) {
            Link link = linkOf(client);
            link.crashed = true;
            if (link.silentSince == null) {
                link.silentSince = clock.instant();
            }
        }
    }

    /**
     * Ends every live grant of {@code name} now — the plain lock's and the read-write lock's — as if their lease
     * time had run out: anyone may take the lock, and the holders learn at their next renewal or
     * {@code checkValid()} that their leases are lost. Wakes the waiters.
     *
     * @return how many grants were ended (0 if none was live)
     * @throws IllegalArgumentException if {@code name} is null
     */
    public int expire(String name) {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        int ended = 0;
        List<ReleaseListener> wake;
        synchronized (mutex) {
            Instant now = clock.instant();
            for (LockId id : List.of(new LockId(name, false), new LockId(name, true))) {
                LockState s = locks.get(id);
                if (s != null) {
                    for (Grant g : s.grants.values()) {
                        if (g.liveAt(now)) {
                            g.expiresAt = now;
                            ended++;
                        }
                    }
                }
            }
            wake = ended == 0 ? List.of() : reachableListeners();
        }
        wake.forEach(l -> l.released(name));
        return ended;
    }

    /**
     * The holder ids waiting in line for the plain lock {@code name}, head first: places that have not ended.
     *
     * @throws IllegalArgumentException if {@code name} is null
     */
    public List<String> waiting(String name) {
        return waiting(name, false);
    }

    /** As {@link #waiting(String)}, for the plain lock or the read-write lock of that name. */
    List<String> waiting(String name, boolean readWrite) {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        synchronized (mutex) {
            LockState s = locks.get(new LockId(name, readWrite));
            if (s == null) {
                return List.of();
            }
            Instant now = clock.instant();
            return s.line.values().stream().filter(p -> !p.endedAt(now)).map(p -> p.owner).toList();
        }
    }

    @Override
    public String toString() {
        return description;
    }

    // ---- what the backend of each client calls ------------------------------------------------------------

    /** Connects a client; its backend calls this from {@code start}. */
    Link connect(String clientId, ReleaseListener listener) {
        synchronized (mutex) {
            if (links.containsKey(clientId)) {
                throw new IllegalStateException("a client with id " + clientId + " is already connected to "
                        + description);
            }
            Link link = new Link(clientId, listener);
            links.put(clientId, link);
            return link;
        }
    }

    AcquireResult tryAcquire(Link link, AcquireRequest request) {
        String name = request.name();
        LockId id = new LockId(name, request.mode() != LockMode.EXCLUSIVE);
        AcquireResult result;
        List<ReleaseListener> wake;
        synchronized (mutex) {
            Instant now = reach(link, request.mode().name().toLowerCase() + " acquire of '" + name + "'");
            LockState s = locks.computeIfAbsent(id, k -> new LockState());
            boolean ended = s.purge(now, id.readWrite());
            result = s.decide(request, link, now, id.readWrite(), () -> ++lastToken);
            forgetIfEmpty(id, s); // a try-once on a name nobody uses leaves nothing behind
            wake = ended ? reachableListeners() : List.of();
        }
        wake.forEach(l -> l.released(name));
        return result;
    }

    boolean release(Link link, LeaseKey key) {
        LockId id = new LockId(key.name(), key.mode() != LockMode.EXCLUSIVE);
        List<ReleaseListener> wake;
        synchronized (mutex) {
            Instant now = reach(link, "release of '" + key.name() + "' (token " + key.token() + ")");
            LockState s = locks.get(id);
            Grant g = s == null ? null : s.matching(key);
            if (g == null) {
                return false;
            }
            s.grants.remove(key.owner());
            g.released = true;
            if (g.expiresAt.isAfter(now)) {
                g.expiresAt = now;
            }
            forgetIfEmpty(id, s);
            wake = reachableListeners();
        }
        wake.forEach(l -> l.released(key.name()));
        return true;
    }

    Set<LeaseKey> renew(Link link, Collection<LeaseKey> keys, Duration leaseTime) {
        synchronized (mutex) {
            Instant now = reach(link, "renewal of " + keys.size() + " lease(s)");
            Set<LeaseKey> renewed = new HashSet<>();
            for (LeaseKey key : keys) {
                LockState s = locks.get(new LockId(key.name(), key.mode() != LockMode.EXCLUSIVE));
                Grant g = s == null ? null : s.matching(key);
                if (g != null && g.liveAt(now)) {
                    g.expiresAt = now.plus(leaseTime);
                    renewed.add(key);
                }
            }
            return renewed;
        }
    }

    boolean confirm(Link link, LeaseKey key) {
        synchronized (mutex) {
            Instant now = reach(link, "confirming '" + key.name() + "' (token " + key.token() + ")");
            LockState s = locks.get(new LockId(key.name(), key.mode() != LockMode.EXCLUSIVE));
            Grant g = s == null ? null : s.matching(key);
            return g != null && g.liveAt(now);
        }
    }

    void withdraw(Link link, AcquireRequest request) {
        LockId id = new LockId(request.name(), request.mode() != LockMode.EXCLUSIVE);
        List<ReleaseListener> wake;
        synchronized (mutex) {
            reach(link, "withdrawing the place of '" + request.name() + "' in line");
            LockState s = locks.get(id);
            Place p = s == null ? null : s.line.get(request.owner());
            if (p == null || p.link != link) {
                return; // never taken (a try-once takes none), or already gone
            }
            s.line.remove(request.owner());
            forgetIfEmpty(id, s);
            wake = reachableListeners();
        }
        wake.forEach(l -> l.released(request.name()));
    }

    /** The plain locks the server has granted, held or not, like the rows of a lease table. */
    List<LockInfo> inspect(Link link) {
        synchronized (mutex) {
            Instant now = reach(link, "listing locks");
            List<LockInfo> out = new ArrayList<>();
            for (Map.Entry<LockId, LockState> e : locks.entrySet()) {
                Grant g = e.getValue().last;
                if (!e.getKey().readWrite() && g != null) {
                    boolean held = g.liveAt(now);
                    out.add(new LockInfo(e.getKey().name(), held ? g.owner : null, g.token, g.acquiredAt,
                            g.expiresAt, held));
                }
            }
            out.sort(Comparator.comparing(LockInfo::name));
            return out;
        }
    }

    /**
     * Disconnects a client; its backend calls this from {@code close}. A reachable client withdraws every place
     * it still keeps in line; a crashed or cut-off one cannot, so its places end one lease time after it went
     * silent.
     */
    void disconnect(Link link) {
        Set<String> freed = new HashSet<>();
        List<ReleaseListener> wake;
        synchronized (mutex) {
            if (link.closed) {
                return;
            }
            link.closed = true;
            links.remove(link.clientId, link);
            if (link.silentSince == null) {
                Iterator<Map.Entry<LockId, LockState>> it = locks.entrySet().iterator();
                while (it.hasNext()) {
                    Map.Entry<LockId, LockState> e = it.next();
                    LockState s = e.getValue();
                    if (s.line.values().removeIf(p -> p.link == link)) {
                        freed.add(e.getKey().name());
                        if (s.isEmpty()) {
                            it.remove();
                        }
                    }
                }
            }
            wake = freed.isEmpty() ? List.of() : reachableListeners();
        }
        freed.forEach(name -> wake.forEach(l -> l.released(name)));
    }

    // ---- internals (all under the mutex) ------------------------------------------------------------------

    /** The server's now, if the client can reach the server; otherwise the failure its call meets. */
    private Instant reach(Link link, String what) {
        String why = null;
        if (link.closed) {
            why = "client " + link.clientId + " is closed";
        } else if (link.crashed) {
            why = "client " + link.clientId + " crashed (InMemoryLockServer.crash): nothing it sends reaches the"
                    + " server";
        } else if (link.cuts > 0) {
            why = "client " + link.clientId + " is cut off from the server (InMemoryLockServer.cutOff)";
        }
        if (why != null) {
            throw new LockBackendException(description, what + " failed: " + why, null);
        }
        return clock.instant();
    }

    private Link linkOf(LockClient client) {
        Objects.requireNonNull(client, "client");
        Link link = links.get(client.clientId());
        if (link == null) {
            throw new IllegalArgumentException("client " + client.clientId() + " is not connected to " + description
                    + " (closed, or built on another server)");
        }
        return link;
    }

    private List<ReleaseListener> reachableListeners() {
        List<ReleaseListener> out = new ArrayList<>();
        for (Link l : links.values()) {
            if (l.listener != null && l.silentSince == null && !l.closed) {
                out.add(l.listener);
            }
        }
        return out;
    }

    private void forgetIfEmpty(LockId id, LockState s) {
        if (s.isEmpty()) {
            locks.remove(id, s);
        }
    }

    private record LockId(String name, boolean readWrite) {
    }

    /** One client's connection to the server. Fields other than the final ones are guarded by the mutex. */
    static final class Link {
        final String clientId;
        final ReleaseListener listener;
        int cuts;
        boolean crashed;
        boolean closed;
        /** When the server last heard from a crashed or cut-off client; null while it is reachable. */
        Instant silentSince;

        private Link(String clientId, ReleaseListener listener) {
            this.clientId = clientId;
            this.listener = listener;
        }
    }

    /** A grant: the lease row of a plain lock, or one holder's row of a read-write lock. */
    private static final class Grant {
        final String owner;
        final LockMode mode;
        final long token;
        final Instant acquiredAt;
        Instant expiresAt;
        boolean released;

        Grant(String owner, LockMode mode, long token, Instant acquiredAt, Instant expiresAt) {
            this.owner = owner;
            this.mode = mode;
            this.token = token;
            this.acquiredAt = acquiredAt;
            this.expiresAt = expiresAt;
        }

        boolean liveAt(Instant now) {
            return !released && expiresAt.isAfter(now);
        }
    }

    /** A waiter's place in line. It ends only with its client's silence (crash, cut-off) plus one lease time. */
    private static final class Place {
        final String owner;
        final Link link;
        final LockMode mode;
        final Duration leaseTime;

        Place(String owner, Link link, LockMode mode, Duration leaseTime) {
            this.owner = owner;
            this.link = link;
            this.mode = mode;
            this.leaseTime = leaseTime;
        }

        /** When this place ends, or null while its client is reachable. */
        Instant endsAt() {
            return link.silentSince == null ? null : link.silentSince.plus(leaseTime);
        }

        boolean endedAt(Instant now) {
            Instant end = endsAt();
            return end != null && !now.isBefore(end);
        }
    }

    /** One lock: its grants and its line. */
    private static final class LockState {
        /** By owner. A plain lock has at most one: its lease row, kept after expiry until replaced. */
        final Map<String, Grant> grants = new LinkedHashMap<>();
        /** The line, head first, by owner (one acquisition per thread at a time). */
        final LinkedHashMap<String, Place> line = new LinkedHashMap<>();
        /** A plain lock's latest grant, released or not, for {@code inspect} (a lease row outlives its lease). */
        Grant last;

        boolean isEmpty() {
            return grants.isEmpty() && line.isEmpty() && last == null;
        }

        Grant matching(LeaseKey key) {
            Grant g = grants.get(key.owner());
            return g != null && g.token == key.token() && g.mode == key.mode() ? g : null;
        }

        /**
         * Drops what has ended: places of clients silent for a lease time and, for a read-write lock, holders
         * whose lease ran out (a plain lock keeps its row: a late release of it still matches, as on a lease
         * table). Returns whether anything was dropped, which may change who is next.
         */
        boolean purge(Instant now, boolean readWrite) {
            boolean dropped = line.values().removeIf(p -> p.endedAt(now));
            if (readWrite) {
                dropped |= grants.values().removeIf(g -> !g.liveAt(now));
            }
            return dropped;
        }

        /**
         * One attempt:
         * <ol>
         *   <li>Busy if a live grant conflicts: any grant for a plain request (even the requester's own, like a
         *       lease row whose lease has not run out); for a read request another owner's writer; for a write
         *       request any other owner's grant.</li>
         *   <li>Busy if a place ahead of the requester's own (or, without a place, any place) blocks it: any
         *       place for a plain or write request, a writer's place for a read request.</li>
         *   <li>Busy: a waiting request takes a place at the end of the line, unless it has one; a try-once takes
         *       none. Granted: the requester leaves the line and gets a fresh token.</li>
         * </ol>
         */
        AcquireResult decide(AcquireRequest r, Link link, Instant now, boolean readWrite,
                             LongSupplier tokens) {
            String owner = r.owner();
            Grant blocker = null;
            for (Grant g : grants.values()) {
                if (!g.liveAt(now)) {
                    continue;
                }
                boolean conflicts = switch (r.mode()) {
                    case EXCLUSIVE -> true;
                    case READ -> g.mode == LockMode.WRITE && !g.owner.equals(owner);
                    case WRITE -> !g.owner.equals(owner);
                };
                if (conflicts && (blocker == null || g.mode != LockMode.READ)) {
                    blocker = g;
                }
            }
            Place mine = line.get(owner);
            Place ahead = null;
            for (Place p : line.values()) {
                if (p == mine) {
                    break;
                }
                if (r.mode() != LockMode.READ || p.mode == LockMode.WRITE) {
                    ahead = p;
                    break;
                }
            }
            if (blocker == null && ahead == null) {
                line.remove(owner);
                Grant g = new Grant(owner, r.mode(), tokens.getAsLong(), now, now.plus(r.leaseTime()));
                if (!readWrite) {
                    grants.clear(); // the previous grant has ended: the row is taken over
                    last = g;
                }
                grants.put(owner, g); // a read-write owner's own earlier row is replaced
                return new AcquireResult.Granted(g.token);
            }
            if (mine == null && r.patience() == AcquireRequest.Patience.WAIT) {
                line.put(owner, new Place(owner, link, r.mode(), r.leaseTime()));
            }
            if (blocker != null) {
                return new AcquireResult.Busy(blocker.owner, blocker.token, Duration.between(now, blocker.expiresAt));
            }
            Instant end = ahead.endsAt();
            return new AcquireResult.Busy(ahead.owner, -1, end == null ? null : Duration.between(now, end));
        }
    }
}
