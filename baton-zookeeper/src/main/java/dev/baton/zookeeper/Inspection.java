package dev.baton.zookeeper;

import dev.baton.ForcedRelease;
import dev.baton.LockInfo;
import dev.baton.spi.LockMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The operator's view and lever over every lock under the root: the holders as the server shows them now
 * ({@code baton list}), and the forced release of an exclusive lock's holder ({@code baton release}).
 */
final class Inspection {
    private final Calls calls;
    private final HeldNodes held;
    private final String root;

    Inspection(Calls calls, HeldNodes held, String root) {
        this.calls = calls;
        this.held = held;
        this.root = root;
    }

    /**
     * Deletes the member node that holds the exclusive lock {@code name} now (with {@code token}, only if its
     * {@code czxid} is that token), at the version it was read at.
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        String parent = ZooKeeperNames.parent(root, name);
        try {
            List<String> children = calls.children(parent);
            for (String child : children) {
                Optional<ZooKeeperNames.Member> m = ZooKeeperNames.member(child);
                if (m.isEmpty() || m.get().mode() != LockMode.EXCLUSIVE
                        || !Line.standing(children, child, LockMode.EXCLUSIVE).holds()) {
                    continue;
                }
                Stat stat = new Stat();
                byte[] data;
                try {
                    data = calls.client().getData().storingStatIn(stat).forPath(parent + "/" + child);
                    if (token.isPresent() && stat.getCzxid() != token.getAsLong()) {
                        return Optional.empty();
                    }
                    calls.client().delete().withVersion(stat.getVersion()).forPath(parent + "/" + child);
                } catch (KeeperException.NoNodeException e) {
                    return Optional.empty(); // released meanwhile
                }
                return Optional.of(new ForcedRelease(name, Calls.owner(data), stat.getCzxid(), null));
            }
            return Optional.empty();
        } catch (Exception e) {
            throw calls.failed("force release of '" + name + "'", e);
        }
    }

    /** Every lock under the root that some member holds now, one entry per holding member. */
    List<LockInfo> inspect() {
        List<LockInfo> out = new ArrayList<>();
        try {
            for (String lock : calls.children(root)) {
                Optional<String> name = ZooKeeperNames.decode(lock);
                if (name.isEmpty()) {
                    continue;
                }
                String parent = root + "/" + lock;
                List<String> children = calls.children(parent);
                for (String child : children) {
                    Optional<ZooKeeperNames.Member> m = ZooKeeperNames.member(child);
                    if (m.isEmpty() || !Line.standing(children, child, m.get().mode()).holds()) {
                        continue;
                    }
                    Stat stat = new Stat();
                    try {
                        String path = parent + "/" + child;
                        byte[] data = calls.client().getData().storingStatIn(stat).forPath(path);
                        out.add(new LockInfo(name.get(), Calls.owner(data), tokenOf(m.get(), path, stat),
                                Instant.ofEpochMilli(stat.getCtime()), null, true));
                    } catch (KeeperException.NoNodeException e) {
                        // released meanwhile
                    }
                }
            }
        } catch (Exception e) {
            throw calls.failed("listing the locks under " + root, e);
        }
        return out;
    }

    /**
     * A holding member's token as {@link #inspect} shows it: an exclusive member's {@code czxid}; a read-write
     * member's token is known only to its client (fixed when its grant was seen): this client's own, else -1.
     */
    private long tokenOf(ZooKeeperNames.Member member, String path, Stat stat) {
        return member.mode() == LockMode.EXCLUSIVE ? stat.getCzxid() : held.tokenOf(path, stat.getCzxid());
    }
}
