package dev.baton.zookeeper;

import dev.baton.LockBackendException;
import dev.baton.spi.LeaseKey;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The nodes of this client's grants, by grant, and what is done with them once granted: release (which keeps the
 * hold until the delete succeeded or the session is known gone), renewal (one read-only {@code multi} per batch),
 * the exact check after a reconnection, and the delete of a lease lost while its session lived.
 */
final class HeldNodes {
    /** Held nodes read by one renewal request (a read-only multi), at most. */
    static final int RENEW_BATCH = 1_000;
    /**
     * Estimated bytes of one renewal request and its answer, at most (a long lock name encodes to up to 12 bytes per
     * code point): well under ZooKeeper's default {@code jute.maxbuffer} of 1 MB, whatever the names.
     */
    static final long RENEW_BATCH_BYTES = 256 * 1024;

    private final Calls calls;
    private final Deletes deletes;
    /** Granted nodes by grant. */
    private final ConcurrentHashMap<LeaseKey, Node> held = new ConcurrentHashMap<>();

    HeldNodes(Calls calls, Deletes deletes) {
        this.calls = calls;
        this.deletes = deletes;
    }

    /** Keeps the node of a grant. */
    void granted(LeaseKey lease, Node node) {
        held.put(lease, node);
    }

    /**
     * Releases a grant by deleting its node; false if there was nothing to delete (deleted under its holder, or
     * ended with its session, {@code lostSession} being the session whose loss was reported).
     *
     * @throws LockBackendException if the delete could not reach ZooKeeper: the node is deleted when the connection
     *                              returns on its session, or ends with it
     */
    boolean release(LeaseKey lease, long lostSession) {
        Node node = held.get(lease);
        if (node == null) {
            return false;
        }
        if (node.gone || node.sessionId == lostSession) {
            held.remove(lease, node); // deleted under us, or ended with its session
            return false;
        }
        if (calls.connected() && node.sessionId != calls.currentSession()) {
            // an older session's node (a node of the live session is deleted below, even one granted before the
            // connection listener learned of that session)
            held.remove(lease, node);
            return false;
        }
        if (!calls.connected()) {
            held.remove(lease, node);
            deletes.later(node);
            throw new LockBackendException(calls.description(), "release of '" + lease.name() + "' (token "
                    + lease.token() + ") could not reach ZooKeeper: its node is deleted when the connection returns,"
                    + " or ends with the session", null);
        }
        try {
            calls.bounded("release of '" + lease.name() + "' (token " + lease.token() + ")",
                    () -> calls.client().delete().forPath(node.path), null);
            held.remove(lease, node);
            return true;
        } catch (KeeperException.NoNodeException e) {
            held.remove(lease, node);
            return false;
        } catch (Exception e) {
            held.remove(lease, node);
            deletes.later(node);
            throw calls.failed("release of '" + lease.name() + "' (token " + lease.token() + "); its node is deleted"
                    + " when the connection returns, or ends with the session", e);
        }
    }

    /**
     * The leases whose nodes the server shows on the current session with their {@code czxid}; a node found deleted
     * is marked gone. Read-only multis (ZooKeeper 3.6+) of at most {@link #RENEW_BATCH} nodes and
     * {@link #RENEW_BATCH_BYTES}.
     */
    Set<LeaseKey> renew(Collection<LeaseKey> leases) {
        if (leases.isEmpty()) {
            return Set.of();
        }
        calls.requireConnected("renewal of " + leases.size() + " lease(s)");
        long sessionNow = calls.currentSession();
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
            ZooKeeper zk = calls.client().getZookeeperClient().getZooKeeper();
            String namespace = calls.client().getNamespace();
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
            throw calls.failed("renewal of " + leases.size() + " lease(s)", e);
        }
        if (calls.currentSession() != sessionNow) {
            throw new LockBackendException(calls.description(), "renewal of " + leases.size() + " lease(s): the"
                    + " session changed during the check", null);
        }
        return out;
    }

    /** Whether the lease's node exists, on the current session, with its {@code czxid}: one exact read. */
    boolean confirm(LeaseKey lease) {
        Node n = held.get(lease);
        if (n == null) {
            return false;
        }
        calls.requireConnected("check of '" + lease.name() + "'");
        try {
            Stat stat = calls.bounded("check of '" + lease.name() + "'",
                    () -> calls.client().checkExists().forPath(n.path), null);
            return stat != null && stat.getEphemeralOwner() == calls.currentSession() && stat.getCzxid() == n.czxid;
        } catch (LockBackendException e) {
            throw e;
        } catch (Exception e) {
            throw calls.failed("check of '" + lease.name() + "'", e);
        }
    }

    /**
     * The core gave the lease up as lost while its session may live ({@code lostSession} being the session whose loss
     * was reported): its node is deleted in the background, so the next in line gets the lock.
     */
    void lost(LeaseKey lease, long lostSession) {
        Node node = held.get(lease);
        if (node != null && !node.gone && node.sessionId != lostSession) {
            deletes.deleteOwn(node);
        }
    }

    /** The session ended: every node held on it is gone. */
    void sessionEnded(long ended) {
        held.values().stream().filter(n -> n.sessionId == ended).forEach(n -> n.gone = true);
    }

    /** The token of this client's grant on the node at {@code path} created at {@code czxid}, or -1 if none. */
    long tokenOf(String path, long czxid) {
        for (Map.Entry<LeaseKey, Node> e : held.entrySet()) {
            if (e.getValue().path.equals(path) && e.getValue().czxid == czxid) {
                return e.getKey().token();
            }
        }
        return -1;
    }
}
