package dev.baton.checker;

/**
 * How the protected resource judges one access by token. The checker's resource uses {@link #STRICT}: it
 * refuses every access (begin, read, write, end) whose token is lower than the highest it has seen for that
 * lock, and every accepted access raises that mark. Fencing only writes is not enough: two holders can read
 * the same value and both write, losing an update.
 *
 * <p>The checker judges the history it records, never the fence's word: its tests plug weaker fences in to
 * show that the checks catch them.
 */
public interface Fence {

    /** The resource the checker runs: every access is fenced. */
    Fence STRICT = new Fence() {
        @Override
        public boolean admits(String op, long token, long highestSeen) {
            return token >= highestSeen;
        }

        @Override
        public boolean raisesMark(String op) {
            return true;
        }

        @Override
        public String toString() {
            return "strict (reads and writes fenced)";
        }
    };

    /**
     * Whether to accept the access.
     *
     * @param op          {@code begin}, {@code read}, {@code write} or {@code end}
     * @param highestSeen the highest token accepted so far for the lock (with {@link #raisesMark}), or
     *                    {@link Long#MIN_VALUE}
     */
    boolean admits(String op, long token, long highestSeen);

    /** Whether an accepted access of this kind raises the highest-seen mark to its token. */
    boolean raisesMark(String op);
}
