package dev.baton.shedlock;

import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/** One ShedLock lock (or extension) over a {@link Grant}: usable once, for an unlock or an extend. */
final class BatonSimpleLock implements SimpleLock {
    private final Grant grant;
    private final AtomicBoolean used = new AtomicBoolean();

    BatonSimpleLock(Grant grant) {
        this.grant = grant;
    }

    @Override
    public void unlock() {
        use("unlocked");
        try {
            grant.unlock();
        } finally {
            BatonShedLock.popFromCurrentThread(grant);
        }
    }

    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        Objects.requireNonNull(lockAtMostFor, "lockAtMostFor");
        Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor");
        if (lockAtMostFor.isNegative() || lockAtLeastFor.isNegative() || lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
            throw new IllegalArgumentException("extend needs 0 <= lockAtLeastFor <= lockAtMostFor, got lockAtMostFor "
                    + lockAtMostFor + " and lockAtLeastFor " + lockAtLeastFor + " for '" + grant.name() + "'");
        }
        use("extended");
        return grant.extend(lockAtMostFor, lockAtLeastFor) ? Optional.of(new BatonSimpleLock(grant)) : Optional.empty();
    }

    private void use(String what) {
        if (!used.compareAndSet(false, true)) {
            throw new IllegalStateException("ShedLock lock '" + grant.name() + "' was already unlocked or extended;"
                    + " it cannot be " + what + " again");
        }
    }

    @Override
    public String toString() {
        return "BatonSimpleLock[" + grant.name() + "]";
    }
}
