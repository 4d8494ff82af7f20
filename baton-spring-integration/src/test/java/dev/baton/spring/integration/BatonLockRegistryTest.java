package dev.baton.spring.integration;

import dev.baton.LockClient;
import dev.baton.memory.InMemoryLockServer;
import dev.baton.memory.InMemoryLocks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The registry's contract on the in-memory backend (two clients = two processes). */
class BatonLockRegistryTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final LockClient a = InMemoryLocks.builder(server).build();
    private final LockClient b = InMemoryLocks.builder(server).build();
    private final BatonLockRegistry registryA = new BatonLockRegistry(a, "si:");
    private final BatonLockRegistry registryB = new BatonLockRegistry(b, "si:");

    @AfterEach
    void close() {
        a.close();
        b.close();
    }

    @Test
    void excludesOtherProcessesAndGivesATokenPerHold() throws InterruptedException {
        BatonLock lock = registryA.obtain("orders");
        assertThat(registryA.obtain("orders")).isSameAs(lock);
        assertThat(lock.tryLock()).isTrue();
        long first = registryA.fencingToken("orders").orElseThrow();
        assertThat(registryB.obtain("orders").tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(lock.tryLock()).as("re-entrant").isTrue();
        lock.unlock();
        lock.unlock();
        assertThat(registryA.fencingToken("orders")).isEmpty();
        BatonLock other = registryB.obtain("orders");
        assertThat(other.tryLock(1, TimeUnit.SECONDS)).isTrue();
        assertThat(other.fencingToken().orElseThrow()).isGreaterThan(first);
        other.unlock();
    }

    @Test
    void unlockByAnotherThreadIsRefused() {
        BatonLock lock = registryA.obtain("k");
        lock.lock();
        try {
            assertThatThrownBy(() -> CompletableFuture.runAsync(lock::unlock).join())
                    .hasCauseInstanceOf(IllegalMonitorStateException.class);
        } finally {
            lock.unlock();
        }
    }

    @Test
    void renewConfirmsTheHoldAndRefusesWhatItCannotDo() {
        assertThatThrownBy(() -> registryA.renewLock("r")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not held");
        BatonLock lock = registryA.obtain("r");
        lock.lock();
        try {
            registryA.renewLock("r");
            assertThatThrownBy(() -> registryA.renewLock("r", Duration.ofSeconds(5)))
                    .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("leaseTime");
        } finally {
            lock.unlock();
        }
    }

    @Test
    void expireDropsOnlyUnheldLocks() {
        BatonLock held = registryA.obtain("held");
        BatonLock idle = registryA.obtain("idle");
        held.lock();
        try {
            registryA.expireUnusedOlderThan(0);
            assertThat(registryA.obtain("held")).isSameAs(held);
            assertThat(registryA.obtain("idle")).isNotSameAs(idle);
        } finally {
            held.unlock();
        }
    }
}
