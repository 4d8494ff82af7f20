package dev.baton.bench;

import dev.baton.zookeeper.ZooKeeperLocks;

import java.time.Duration;

/**
 * Baton's ZooKeeper backend ({@code baton-zookeeper}), over a Curator client (one session) of its own per bench
 * client, against the server process {@code scripts/start-servers.sh} starts. Its session timeout is the lease time
 * (10 s unless a workload sets one).
 */
final class BatonZooKeeperSubject implements Subject {

    @Override
    public String id() {
        return "baton-zookeeper";
    }

    @Override
    public Kind kind() {
        return Kind.BATON;
    }

    @Override
    public String server() {
        return "zookeeper";
    }

    @Override
    public String library() {
        return "Baton " + Subject.versionOf("dev.baton", "baton-zookeeper");
    }

    @Override
    public String waits() {
        return "ZooKeeper watch on the predecessor node (FIFO line); token = the node's czxid";
    }

    @Override
    public String baseline() {
        return "curator-mutex";
    }

    @Override
    public boolean manyLocks() {
        return true;
    }

    @Override
    public Client open(String name, Duration leaseTime) {
        ZooKeeperLocks.Builder b = ZooKeeperLocks.builder(Servers.zk()).rootPath("/bench/baton").clientIdPrefix(name);
        if (leaseTime != null) {
            b.leaseTime(leaseTime).sessionTimeout(leaseTime);
        }
        return new BatonClient(b.build());
    }
}
