package dev.baton.spring.boot;

import dev.baton.LockObserver;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** Observers that open a scope when an acquisition starts close them nested: the last opened first. */
class CompositeObserverTest {

    private static LockObserver scoped(String name, List<String> events) {
        return new LockObserver() {
            @Override
            public Acquisition acquireStarted(String backend, String lockName, boolean waits) {
                events.add("open " + name);
                return (outcome, latency, waited, error) -> events.add("close " + name);
            }
        };
    }

    @Test
    void anAcquisitionsScopesAreClosedInReverseOfOpening() {
        List<String> events = new CopyOnWriteArrayList<>();
        LockObserver composite = CompositeObserver.of(List.of(scoped("tracing", events), scoped("metrics", events)));
        composite.acquireStarted("test", "scoped", true)
                .ended(LockObserver.Outcome.GRANTED, Duration.ZERO, Duration.ZERO, null);
        assertThat(events).containsExactly("open tracing", "open metrics", "close metrics", "close tracing");
    }
}
