package dev.baton.zookeeper;

import dev.baton.LockBackendException;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LockMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The waiting side of one backend ({@link dev.baton.spi.WaitingQueue}): the places in line it keeps, by the request
 * object that keeps each across the core's wait slices; creating a place's member node; arming a waiter's one watch
 * on the member it waits for, with the busy answer that names the head of the line; and withdrawing a place — one on
 * the core's word, or every place when the client closes.
 */
final class Places {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
    /** A busy answer that names no holder ("held by another client" if the wait ends in a timeout). */
    static final AcquireResult.Busy UNNAMED_HOLDER = new AcquireResult.Busy(null, -1, null);

    private final Calls calls;
    private final Deletes deletes;
    /** Waiting places by the request object that keeps them (identity, as the SPI promises one object). */
    private final Map<AcquireRequest, Place> places = Collections.synchronizedMap(new IdentityHashMap<>());

    Places(Calls calls, Deletes deletes) {
        this.calls = calls;
        this.deletes = deletes;
    }

    Place get(AcquireRequest request) {
        return places.get(request);
    }

    void put(AcquireRequest request, Place place) {
        places.put(request, place);
    }

    Place remove(AcquireRequest request) {
        return places.remove(request);
    }

    /**
     * Creates the member node: protected, ephemeral, sequential, the owner as data, parents as containers. Its
     * czxid comes from the create's stat, or (a protected create Curator recovered after a connection loss) from
     * one {@code exists}.
     */
    Node create(String parent, AcquireRequest request, long sessionBefore) throws Exception {
        Stat stat = new Stat();
        String path = calls.client().create().storingStatIn(stat).creatingParentContainersIfNeeded().withProtection()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(parent + "/" + ZooKeeperNames.prefix(request.mode()),
                        request.owner().getBytes(StandardCharsets.UTF_8));
        if (stat.getCzxid() == 0) {
            Stat found = calls.client().checkExists().forPath(path);
            if (found == null) {
                throw new LockBackendException(calls.description(), "acquire of '" + request.name() + "': the node "
                        + path + " Curator recovered after a connection loss is gone", null);
            }
            stat = found;
        }
        if (stat.getEphemeralOwner() != sessionBefore && stat.getEphemeralOwner() != calls.currentSession()) {
            calls.deleteQuietly(path);
            throw new LockBackendException(calls.description(), "acquire of '" + request.name() + "': the session"
                    + " changed while its node was created", null);
        }
        return new Node(path, stat.getCzxid(), stat.getEphemeralOwner());
    }

    /**
     * A waiter not first in its line: arms its one watch on the member it waits for (unless armed on it already) and
     * answers busy, kept as the answer of every attempt until something is heard; null if that member left meanwhile.
     */
    AcquireResult.Busy waitBehind(Place place, String parent, Line.Standing s, long lookedAt) throws Exception {
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
            data = calls.bounded("acquire of '" + place.name + "'",
                    () -> calls.client().getData().storingStatIn(stat).usingWatcher(place).forPath(predecessor), null);
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

    /** The busy answer naming the head of the line, or null if the head left meanwhile. */
    AcquireResult.Busy busy(String parent, ZooKeeperNames.Member head) throws Exception {
        if (head == null) {
            return null;
        }
        Stat stat = new Stat();
        try {
            byte[] data = calls.bounded("reading the head of " + parent,
                    () -> calls.client().getData().storingStatIn(stat).forPath(parent + "/" + head.node()), null);
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
        return new AcquireResult.Busy(Calls.owner(data), head.mode() == LockMode.EXCLUSIVE ? stat.getCzxid() : -1,
                null);
    }

    /** Something may have changed every line unseen (a reconnection): no waiter answers from its last look. */
    void heardAll() {
        synchronized (places) {
            places.values().forEach(p -> p.heard.incrementAndGet());
        }
    }

    /** Withdraws the request's place, if it has one: deletes its node and removes its watch. */
    void withdraw(AcquireRequest request) {
        Place place = places.remove(request);
        if (place != null) {
            deletes.now(place.node);
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
            calls.client().watchers().remove(place).ofType(Watcher.WatcherType.Any).locally().forPath(watching);
        } catch (Exception e) {
            log.debug("could not remove the watch on {}; it goes when that node does", watching, e);
        }
    }

    /**
     * Withdraws every place (the client closes): every node's delete at once, waiting for their answers at most one
     * connection timeout in all; a node left ends with its session.
     */
    void withdrawAll() {
        List<Place> toWithdraw;
        synchronized (places) {
            toWithdraw = new ArrayList<>(places.values());
            places.clear();
        }
        List<CompletableFuture<Void>> deletes = new ArrayList<>();
        for (Place p : toWithdraw) {
            deletes.add(CompletableFuture.runAsync(() -> {
                try {
                    calls.client().delete().forPath(p.node.path);
                } catch (Exception e) {
                    log.debug("could not delete {} while closing; it ends with its session", p.node.path, e);
                }
            }, calls.pool()));
        }
        boolean interrupted = Thread.interrupted();
        try {
            CompletableFuture.allOf(deletes.toArray(new CompletableFuture[0]))
                    .get(calls.connectionTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            log.debug("{}: closing without the answer to every withdrawal; a node left ends with its session",
                    calls.description(), e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
