package dev.baton.spi;

/**
 * Capability of a {@link WaitingQueue} backend whose server announces every waiter's turn: whenever a place in line
 * may now hold the lock (the one ahead of it left: released, withdrawn, its session ended), the backend calls
 * {@link ReleaseListener#released(String, String)} naming that waiter, for as long as its connection lives, and
 * {@link ReleaseListener#resynchronize()} after any gap in which an announcement may have been missed (a ZooKeeper
 * watch on the predecessor node).
 *
 * <p>The core then waits for the announcement instead of polling: a waiter parks for the longest poll
 * ({@code maxPollInterval}, a safety net only) rather than backing off from {@code minPollInterval}, and a release in
 * this client does not wake the client's other waiters (the server announces the next one, wherever it is). Without
 * this capability, a poll every few milliseconds would cost the server a read of the line per waiter.
 */
public interface AnnouncesTurns extends WaitingQueue, NotifiesReleases {
}
