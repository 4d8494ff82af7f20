package dev.baton.zookeeper;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Deleting this client's own nodes when the first try could not: the nodes whose delete could not reach the server,
 * deleted when the connection returns on their session ({@link #retry}) and forgotten when that session ends
 * ({@link #sessionEnded}: the server deleted them); and the background delete of a node whose lease was lost while its
 * session lived, or whose create answered after its caller stopped waiting ({@link #deleteOwn}).
 */
final class Deletes {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

    private final Calls calls;
    /** Nodes whose delete could not reach the server: deleted when the session's connection returns. */
    private final Set<Node> pending = ConcurrentHashMap.newKeySet();

    Deletes(Calls calls) {
        this.calls = calls;
    }

    /** Deletes {@code node} when the connection returns on its session; a session that ends deletes it anyway. */
    void later(Node node) {
        pending.add(node);
    }

    /**
     * Deletes a node of this client, waiting for the answer at most the connection timeout; if it could not be
     * deleted now, it is deleted when the connection returns on its session.
     */
    void now(Node node) {
        if (!calls.deleteQuietly(node.path)) {
            later(node);
        }
    }

    /**
     * Deletes a node of this client in the background (no wait): only if the server shows it on the session it was
     * created in with its {@code czxid}, at the version read. If the server cannot be reached, the node is deleted when
     * the connection returns on that session ({@link #retry}); a session that ends deletes it anyway.
     */
    void deleteOwn(Node node) {
        try {
            calls.client().checkExists().inBackground((c, read) -> {
                Stat stat = read.getStat();
                if (read.getResultCode() == KeeperException.Code.NONODE.intValue() || (read.getResultCode()
                        == KeeperException.Code.OK.intValue() && (stat == null || stat.getEphemeralOwner()
                        != node.sessionId || stat.getCzxid() != node.czxid))) {
                    node.gone = true; // gone already (or not ours: never touched)
                } else if (read.getResultCode() != KeeperException.Code.OK.intValue()) {
                    pending.add(node);
                } else {
                    c.delete().withVersion(stat.getVersion()).inBackground((c2, deleted) -> {
                        if (deleted.getResultCode() == KeeperException.Code.OK.intValue()
                                || deleted.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                            node.gone = true;
                            log.info("{}: deleted node {} of a lease lost while its session lived",
                                    calls.description(), node.path);
                        } else {
                            pending.add(node);
                        }
                    }).forPath(node.path);
                }
            }).forPath(node.path);
        } catch (Exception e) {
            pending.add(node);
        }
    }

    /** The connection returned on {@code session}: deletes its nodes that are waiting for it, in the background. */
    void retry(long session) {
        for (Node n : List.copyOf(pending)) {
            pending.remove(n);
            if (n.sessionId == session) {
                deleteOwn(n);
            }
        }
    }

    /** The session ended: the server deleted its nodes, nothing is left to delete. */
    void sessionEnded() {
        pending.clear();
    }
}
