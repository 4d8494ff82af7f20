package dev.baton.zookeeper;

/**
 * A member node of this client: its path, its {@code czxid} (an exclusive grant's token) and the session it lives in.
 * Whether it was seen gone is the only state it has, and it moves only forward.
 */
final class Node {
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
