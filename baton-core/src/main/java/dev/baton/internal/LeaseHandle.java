package dev.baton.internal;

import dev.baton.Lease;
import dev.baton.LockLostException;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/** One hold of a {@link Hold}, as the user sees it. Closing it drops that hold once. */
final class LeaseHandle implements Lease {
    private final CoreLockClient client;
    private final Hold hold;
    private final AtomicBoolean closed = new AtomicBoolean();

    LeaseHandle(CoreLockClient client, Hold hold) {
        this.client = client;
        this.hold = hold;
    }

    Hold hold() {
        return hold;
    }

    @Override
    public String lockName() {
        return hold.key.name();
    }

    @Override
    public long fencingToken() {
        return hold.key.token();
    }

    @Override
    public String holderId() {
        return hold.key.owner();
    }

    @Override
    public Instant acquiredAt() {
        return hold.acquiredAt;
    }

    @Override
    public int holdCount() {
        return hold.holdCount();
    }

    @Override
    public boolean isValid() {
        return !closed.get() && hold.isValid(client.now());
    }

    @Override
    public void checkValid() {
        if (closed.get()) {
            throw new LockLostException(lockName(), fencingToken(), "this hold on '" + lockName()
                    + "' (token " + fencingToken() + ") was closed");
        }
        client.settleOverdue(hold); // past its deadline though no renewal failed: renewed once before it counts lost
        LockLostException reason = hold.invalidReason(client.now());
        if (reason != null) {
            throw reason;
        }
        if (!client.confirm(hold)) {
            // the hold is LOST now (by this call or a concurrent one); its reason names what happened
            reason = hold.invalidReason(client.now());
            throw reason != null ? reason : new LockLostException(lockName(), fencingToken(), "lease on '"
                    + lockName() + "' (token " + fencingToken() + ") is no longer shown by the server");
        }
    }

    @Override
    public void onLost(Consumer<LockLostException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        hold.onLost(listener);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            client.dropHold(hold);
        }
    }

    @Override
    public String toString() {
        return "Lease[" + lockName() + ", token " + fencingToken() + ", holder " + holderId() + ", holds "
                + holdCount() + (isValid() ? "" : ", invalid") + "]";
    }
}
