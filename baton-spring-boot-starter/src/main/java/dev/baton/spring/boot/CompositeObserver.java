package dev.baton.spring.boot;

import dev.baton.LockLostException;
import dev.baton.LockObserver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Every {@link LockObserver} bean of the application, as the one observer a client takes, called in order (an
 * acquisition's end in reverse order, so scopes the observers opened close nested); one that throws is logged and
 * skipped, so the others are still told.
 */
final class CompositeObserver implements LockObserver {
    private static final Logger log = LoggerFactory.getLogger(CompositeObserver.class);

    private final List<LockObserver> observers;

    CompositeObserver(List<LockObserver> observers) {
        this.observers = List.copyOf(observers);
    }

    static LockObserver of(List<LockObserver> observers) {
        if (observers.isEmpty()) {
            return LockObserver.NONE;
        }
        return observers.size() == 1 ? observers.get(0) : new CompositeObserver(observers);
    }

    @Override
    public Acquisition acquireStarted(String backend, String lockName, boolean waits) {
        List<Acquisition> each = new ArrayList<>(observers.size());
        for (LockObserver o : observers) {
            try {
                each.add(o.acquireStarted(backend, lockName, waits));
            } catch (RuntimeException | Error e) {
                log.warn("LockObserver {} threw; ignored", o, e);
            }
        }
        // ended in reverse: an observer that opened a scope (a tracing span made current) closes it after the ones
        // opened after it, as nested scopes must be closed
        return (outcome, latency, waited, error) -> {
            for (int i = each.size() - 1; i >= 0; i--) {
                Acquisition a = each.get(i);
                try {
                    if (a != null) {
                        a.ended(outcome, latency, waited, error);
                    }
                } catch (RuntimeException | Error e) {
                    log.warn("LockObserver acquisition {} threw; ignored", a, e);
                }
            }
        };
    }

    @Override
    public void leaseGranted(String backend, String lockName, long fencingToken) {
        each(o -> o.leaseGranted(backend, lockName, fencingToken));
    }

    @Override
    public void leaseReleased(String backend, String lockName, Duration held, boolean wasLost) {
        each(o -> o.leaseReleased(backend, lockName, held, wasLost));
    }

    @Override
    public void leaseLost(String backend, String lockName, LossCause cause, LockLostException reason) {
        each(o -> o.leaseLost(backend, lockName, cause, reason));
    }

    @Override
    public void renewed(String backend, int renewed, int failed, Duration took) {
        each(o -> o.renewed(backend, renewed, failed, took));
    }

    private void each(Consumer<LockObserver> call) {
        for (LockObserver o : observers) {
            try {
                call.accept(o);
            } catch (RuntimeException | Error e) {
                log.warn("LockObserver {} threw; ignored", o, e);
            }
        }
    }

    @Override
    public String toString() {
        return "CompositeObserver" + observers;
    }
}
