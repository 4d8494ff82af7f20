package dev.baton.shedlock;

import dev.baton.LockBackendException;
import dev.baton.LockLostException;

import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * What a task running under a {@link BatonLockProvider} lock can ask about it, from the thread that took the lock
 * (the thread ShedLock runs the task on). Like ShedLock's {@code LockAssert}, this is a thread-local view: the
 * provider records a lock on the thread that acquires it and forgets it when the task unlocks it. With nested locks,
 * the innermost one answers.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 * * * * *")
 * @SchedulerLock(name = "invoice-run", lockAtMostFor = "10m")
 * void run() {
 *     long token = BatonShedLock.currentToken();
 *     invoices.markSent(batch, token);      // the table refuses tokens lower than the highest it has seen
 * }
 * }</pre>
 */
public final class BatonShedLock {
    /** The grants taken on this thread and not yet unlocked by their task, innermost last. */
    private static final ThreadLocal<ArrayDeque<Grant>> TAKEN = new ThreadLocal<>();

    private BatonShedLock() {
    }

    /**
     * The fencing token of the lock the calling thread's task runs under: strictly greater than the token of every
     * earlier grant of that lock name, on any node. An extension keeps the token.
     *
     * @throws IllegalStateException if the calling thread holds no lock from a {@link BatonLockProvider}
     */
    public static long currentToken() {
        return innermost().token();
    }

    /**
     * The name of the lock the calling thread's task runs under.
     *
     * @throws IllegalStateException if the calling thread holds no lock from a {@link BatonLockProvider}
     */
    public static String currentLockName() {
        return innermost().name();
    }

    /** Whether the calling thread runs under a lock from a {@link BatonLockProvider} (local state only). */
    public static boolean isLocked() {
        return find() != null;
    }

    /**
     * Returns normally if the calling thread's lock is still held, as the server sees it now (one round trip where
     * the backend can confirm a grant, see {@link dev.baton.Lease#checkValid()}). Call it before a critical write.
     *
     * @throws IllegalStateException if the calling thread holds no lock from a {@link BatonLockProvider}
     * @throws LockLostException     if the lock ended: lost, or released when {@code lockAtMostFor} passed
     * @throws LockBackendException  if the server could not be asked: validity is unknown, treat it as not confirmed
     */
    public static void checkValid() {
        innermost().checkValid();
    }

    private static Grant innermost() {
        Grant g = find();
        if (g == null) {
            throw new IllegalStateException("thread " + Thread.currentThread().getName() + " holds no lock from a "
                    + "BatonLockProvider: call this from inside the locked task, on the thread that runs it");
        }
        return g;
    }

    private static Grant find() {
        ArrayDeque<Grant> taken = TAKEN.get();
        if (taken == null) {
            return null;
        }
        for (Iterator<Grant> it = taken.descendingIterator(); it.hasNext(); ) {
            Grant g = it.next();
            if (!g.taskDone()) {
                return g;
            }
        }
        return null;
    }

    static void pushOnCurrentThread(Grant grant) {
        ArrayDeque<Grant> taken = TAKEN.get();
        if (taken == null) {
            taken = new ArrayDeque<>();
            TAKEN.set(taken);
        }
        // forget the locks unlocked from another thread, or ended (capped, lost) and never unlocked
        taken.removeIf(Grant::over);
        taken.addLast(grant);
    }

    static void popFromCurrentThread(Grant grant) {
        ArrayDeque<Grant> taken = TAKEN.get();
        if (taken == null) {
            return;
        }
        taken.removeLastOccurrence(grant);
        taken.removeIf(Grant::taskDone);
        if (taken.isEmpty()) {
            TAKEN.remove();
        }
    }
}
