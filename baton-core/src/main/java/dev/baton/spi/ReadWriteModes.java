package dev.baton.spi;

/**
 * Capability of a backend whose {@link LockBackend#tryAcquire} (and {@link BlockingWait#awaitGrant}, if it has it)
 * accepts {@link LockMode#READ} and {@link LockMode#WRITE} besides {@link LockMode#EXCLUSIVE}: readers share, a
 * writer is alone, and a waiting writer holds back new readers (no writer starvation). The core offers
 * {@code readWriteLock(name)} only on such a backend.
 *
 * <p>It adds no method: the mode travels in the {@link AcquireRequest} and the {@link LeaseKey}.
 */
public interface ReadWriteModes extends LockBackend {
}
