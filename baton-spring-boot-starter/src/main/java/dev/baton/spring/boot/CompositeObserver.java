package dev.baton.spring.boot;

import dev.baton.LockLostException;
import dev.baton.LockObserver;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Every {@link LockObserver} bean of the application, as the one observer a client takes, in order. */
final class CompositeObserver implements LockObserver {
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
            each.add(o.acquireStarted(backend, lockName, waits));
        }
        return (outcome, latency, waited, error) -> each.forEach(a -> {
            if (a != null) {
                a.ended(outcome, latency, waited, error);
            }
        });
    }

    @Override
    public void leaseGranted(String backend, String lockName, long fencingToken) {
        observers.forEach(o -> o.leaseGranted(backend, lockName, fencingToken));
    }

    @Override
    public void leaseReleased(String backend, String lockName, Duration held, boolean wasLost) {
        observers.forEach(o -> o.leaseReleased(backend, lockName, held, wasLost));
    }

    @Override
    public void leaseLost(String backend, String lockName, LossCause cause, LockLostException reason) {
        observers.forEach(o -> o.leaseLost(backend, lockName, cause, reason));
    }

    @Override
    public void renewed(String backend, int renewed, int failed, Duration took) {
        observers.forEach(o -> o.renewed(backend, renewed, failed, took));
    }

    @Override
    public String toString() {
        return "CompositeObserver" + observers;
    }
}
