package dev.baton.zookeeper;

import dev.baton.spi.AcquireResult;
import dev.baton.spi.ReleaseListener;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A waiter's place: its node, the predecessor it watches (one watch at a time), and the busy answer of the look
 * that left the watch armed. While nothing was heard since that look ({@link #heard} unchanged), the line ahead
 * is as it was, and an attempt answers from it without a request: the watch, or a reconnection, wakes the waiter.
 */
final class Place implements Watcher {
    final String name;
    final String owner;
    final Node node;
    volatile String watching;
    /** Counts what may have changed the line since a look: the watch fired, or the connection came back. */
    final AtomicLong heard = new AtomicLong();
    /** The answer of the last look that left the watch armed, valid while {@link #heard} is {@link #answeredAt}. */
    volatile AcquireResult.Busy answer;
    volatile long answeredAt = -1;
    /** The core's release listener as it is when the watch fires (null before the core listens). */
    private final Supplier<ReleaseListener> releases;

    Place(String name, String owner, Node node, Supplier<ReleaseListener> releases) {
        this.name = name;
        this.owner = owner;
        this.node = node;
        this.releases = releases;
    }

    /** The answer kept from the look that armed the watch, if nothing was heard since; else null. */
    AcquireResult.Busy unchanged() {
        AcquireResult.Busy a = answer;
        return a != null && watching != null && answeredAt == heard.get() ? a : null;
    }

    /** Keeps {@code busy} as the answer while nothing is heard after the look that began at {@code lookedAt}. */
    AcquireResult.Busy keep(AcquireResult.Busy busy, long lookedAt) {
        answer = busy;
        answeredAt = lookedAt;
        return busy;
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.None) {
            return; // a connection state change: reported through Curator's listener
        }
        heard.incrementAndGet();
        watching = null;
        ReleaseListener l = releases.get();
        if (l != null) {
            l.released(name, owner); // its predecessor left: only this waiter's turn may have come
        }
    }
}
