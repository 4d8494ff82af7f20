package dev.baton.zookeeper;

import dev.baton.spi.LockMode;
import org.apache.zookeeper.data.Stat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * A lock's line as one read of its parent's children shows it, and what that read decides: who holds, whom a
 * member waits for, who is at the head, and the fencing token of a grant seen in it. Exclusive members ({@code x})
 * form one line, read and write members ({@code r}, {@code w}) another, so a plain lock and a read-write lock of one
 * name are two locks; an exclusive member or a writer holds when it is first in its line, a reader when no writer
 * is ahead of it. Pure: no call to ZooKeeper.
 */
final class Line {
    private Line() {
    }

    /**
     * What one reading of the line decided for a member.
     *
     * @param holds   it holds the lock
     * @param waitFor the member it waits for (its predecessor; a reader's nearest writer ahead), or null if it holds
     *                or is not in the line
     * @param head    the first member of the line, or null if the line is empty
     * @param present the member is in the line at all
     */
    record Standing(boolean holds, ZooKeeperNames.Member waitFor, ZooKeeperNames.Member head, boolean present) {
    }

    /** The member's standing in its line, from the parent's children. */
    static Standing standing(List<String> children, String mine, LockMode mode) {
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
    static boolean lineAhead(List<String> children, LockMode mode) {
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
     * The fencing token of a grant seen in the read that showed {@code line} (the parent's stat). An exclusive
     * member holds from its create on, or from its predecessor's delete, in line order: its {@code czxid}. A member of
     * a read-write line may be granted together with others (readers behind one writer) and learn of it late: its
     * token is the zxid of the line's last change when its grant was seen (the parent's {@code pzxid}, at least its
     * own {@code czxid}), so it is never lower than a grant the server answered before, and a writer, seen only after
     * every member ahead of it was deleted, gets a token above all of theirs. Readers that hold together may share one.
     */
    static long token(LockMode mode, Node node, Stat line) {
        return mode == LockMode.EXCLUSIVE ? node.czxid : Math.max(node.czxid, line.getPzxid());
    }
}
