package dev.baton.spi;

/**
 * Capability of a backend that keeps a waiter's place in a line on the server across the core's wait slices: a
 * ZooKeeper sequential node, a ticket row of a fair lease table, a read-write writer's claim that holds back new
 * readers. {@link LockBackend#tryAcquire} may leave that place behind when it returns {@link AcquireResult.Busy};
 * later attempts of the same {@link AcquireRequest} find it again.
 *
 * <p>The core's promise: every acquisition that got a busy answer and then stops without a grant — it timed out,
 * was interrupted, gave up after a {@link AcquireRequest.Patience#TRY_ONCE} attempt, or failed — calls
 * {@link #withdraw} once for its request, on the waiting thread, unless the client is closing, in which case
 * {@link LockBackend#close()} must withdraw every place still kept. A place whose client died ends on the server by
 * itself, whatever the waiter's lease: with that client's session, or soon after its heartbeat stops (Redis: one
 * second).
 */
public interface WaitingQueue extends LockBackend {

    /**
     * The waiter of {@code request} stopped waiting without a grant: remove its place, so it does not hold back
     * those behind it. Must tolerate a place that is already gone.
     */
    void withdraw(AcquireRequest request);
}
