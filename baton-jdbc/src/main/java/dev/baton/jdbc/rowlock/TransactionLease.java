package dev.baton.jdbc.rowlock;

import dev.baton.Lease;
import dev.baton.LockLostException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The lease handed to {@link dev.baton.jdbc.TransactionWork}: valid exactly while the transaction that holds the row lock is
 * open. It is lost (listeners run, once) only if the transaction ended because its connection failed; a
 * commit or a rollback ends it normally. {@link #close()} does nothing: the hold ends with the transaction.
 */
final class TransactionLease implements Lease {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionLease.class);

    private enum State { OPEN, ENDED, LOST }

    private final String name;
    private final long token;
    private final String holder;
    private final Instant acquiredAt = Instant.now();
    private final String backend;
    private final List<Consumer<LockLostException>> listeners = new CopyOnWriteArrayList<>();
    private volatile State state = State.OPEN;
    private volatile LockLostException lostReason;

    TransactionLease(String name, long token, String holder, String backend) {
        this.name = name;
        this.token = token;
        this.holder = holder;
        this.backend = backend;
    }

    @Override
    public String lockName() {
        return name;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public String holderId() {
        return holder;
    }

    @Override
    public Instant acquiredAt() {
        return acquiredAt;
    }

    @Override
    public int holdCount() {
        return 1;
    }

    @Override
    public boolean isValid() {
        return state == State.OPEN;
    }

    @Override
    public void checkValid() {
        State s = state;
        if (s == State.LOST) {
            throw lostReason;
        }
        if (s == State.ENDED) {
            throw new LockLostException(name, token, "the transaction holding '" + name + "' (token " + token
                    + ") on " + backend + " has ended");
        }
    }

    @Override
    public void onLost(Consumer<LockLostException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        listeners.add(listener);
        if (state == State.LOST && listeners.remove(listener)) {
            listener.accept(lostReason);
        }
    }

    /** The transaction committed or rolled back. */
    void ended() {
        synchronized (this) {
            if (state == State.OPEN) {
                state = State.ENDED;
            }
        }
        listeners.clear();
    }

    /** The transaction ended because its connection failed: report it lost, once. */
    void lost(Throwable cause) {
        synchronized (this) {
            if (state != State.OPEN) {
                return;
            }
            lostReason = new LockLostException(name, token, "the transaction holding '" + name + "' (token "
                    + token + ") on " + backend + " failed with its connection: " + cause.getMessage(), cause);
            state = State.LOST;
        }
        for (Consumer<LockLostException> l : List.copyOf(listeners)) {
            if (listeners.remove(l)) {
                try {
                    l.accept(lostReason);
                } catch (RuntimeException e) {
                    LOG.warn("a lost-lease listener of '{}' threw", name, e);
                }
            }
        }
    }

    /** Does nothing: the hold ends with the transaction, when the work returns or throws. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "TransactionLease[" + name + ", token " + token + ", " + holder + ", " + state + "]";
    }
}
