package dev.baton.testkit;

import dev.baton.DistributedReadWriteLock;
import dev.baton.Lease;
import dev.baton.LockClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The read-write rung: many readers or one writer, across clients; a writer is not starved by a steady
 * stream of readers; every grant's token beats the earlier ones; no upgrade or downgrade. For strategies
 * with read-write locks (the JDBC lease strategy on every database, the PostgreSQL session strategy).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ReadWriteContract extends ContractBase {

    @Test
    void readersShareAndAWriterExcludesEveryone() {
        String name = unique("rw-share");
        try (LockClient a = client(); LockClient b = client(); LockClient c = client()) {
            Lease r1 = a.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
            Lease r2 = b.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
            assertThat(c.readWriteLock(name).writeLock().tryAcquire()).as("writer while two read").isEmpty();
            assertThat(c.lock(name).tryAcquire()).as("a plain lock of the same name is another lock").isPresent()
                    .get().satisfies(Lease::close);
            r1.close();
            assertThat(c.readWriteLock(name).writeLock().tryAcquire()).as("writer while one reads").isEmpty();
            r2.close();
            try (Lease w = c.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5))) {
                assertThat(w.fencingToken()).isGreaterThan(r2.fencingToken()).isGreaterThan(r1.fencingToken());
                assertThat(a.readWriteLock(name).readLock().tryAcquire()).as("reader while written").isEmpty();
                assertThat(b.readWriteLock(name).writeLock().tryAcquire()).as("second writer").isEmpty();
            }
            try (Lease r3 = a.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5))) {
                assertThat(r3.isValid()).isTrue();
            }
        }
    }

    @Test
    void noUpgradeOrDowngradeInOneThread() {
        String name = unique("rw-upgrade");
        try (LockClient a = client()) {
            DistributedReadWriteLock rw = a.readWriteLock(name);
            try (Lease r = rw.readLock().acquire(Duration.ofSeconds(5)); Lease again = rw.readLock().acquire()) {
                assertThat(again.holdCount()).isEqualTo(2);
                assertThat(again.fencingToken()).isEqualTo(r.fencingToken());
                assertThatThrownBy(() -> rw.writeLock().acquire(Duration.ofSeconds(1)))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no upgrade or downgrade");
            }
            try (Lease w = rw.writeLock().acquire(Duration.ofSeconds(5))) {
                assertThatThrownBy(() -> rw.readLock().tryAcquire()).isInstanceOf(IllegalStateException.class);
                assertThat(w.isValid()).isTrue();
            }
        }
    }

    @Test
    void readersAndWritersFromFourClientsNeverOverlapWrongly() throws Exception {
        String name = unique("rw-fuzz");
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger maxReaders = new AtomicInteger();
        long[] counter = {0};
        AtomicLong writes = new AtomicLong();
        ConcurrentLinkedQueue<Long> writeTokens = new ConcurrentLinkedQueue<>();
        List<LockClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int i = 0; i < 4; i++) {
                clients.add(client());
            }
            List<Future<?>> futures = new ArrayList<>();
            for (LockClient c : clients) {
                DistributedReadWriteLock rw = c.readWriteLock(name);
                for (int t = 0; t < 2; t++) {
                    futures.add(pool.submit(() -> {
                        for (int i = 0; i < 12; i++) {
                            if (ThreadLocalRandom.current().nextInt(3) == 0) {
                                try (Lease w = rw.writeLock().acquire(Duration.ofSeconds(60))) {
                                    if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                                        violations.incrementAndGet();
                                    }
                                    writeTokens.add(w.fencingToken());
                                    long v = counter[0];
                                    Thread.yield();
                                    counter[0] = v + 1;
                                    writes.incrementAndGet();
                                    writers.decrementAndGet();
                                }
                            } else {
                                try (Lease r = rw.readLock().acquire(Duration.ofSeconds(60))) {
                                    maxReaders.accumulateAndGet(readers.incrementAndGet(), Math::max);
                                    if (writers.get() != 0) {
                                        violations.incrementAndGet();
                                    }
                                    Thread.sleep(2);
                                    readers.decrementAndGet();
                                }
                            }
                        }
                        return null;
                    }));
                }
            }
            for (Future<?> f : futures) {
                f.get(100, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(LockClient::close);
        }
        System.out.printf("[%s] read-write fuzz: %d writes, up to %d readers at once%n", fixture.name(), writes.get(),
                maxReaders.get());
        assertThat(violations).as("a writer overlapped a reader or another writer").hasValue(0);
        assertThat(counter[0]).as("unguarded counter").isEqualTo(writes.get());
        assertThat(new ArrayList<>(writeTokens)).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aWriterIsNotStarvedByASteadyStreamOfReaders() throws Exception {
        String name = unique("rw-starve");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger readsAfterWrite = new AtomicInteger();
        AtomicBoolean written = new AtomicBoolean();
        List<LockClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int i = 0; i < 3; i++) {
                clients.add(client());
            }
            CountDownLatch reading = new CountDownLatch(4);
            // four readers in two clients whose holds overlap, so the lock is never free of readers
            for (int t = 0; t < 4; t++) {
                LockClient c = clients.get(t % 2);
                pool.submit(() -> {
                    boolean first = true;
                    while (!stop.get()) {
                        try (Lease r = c.readWriteLock(name).readLock().acquire(Duration.ofSeconds(30))) {
                            if (first) {
                                reading.countDown();
                                first = false;
                            }
                            if (written.get()) {
                                readsAfterWrite.incrementAndGet();
                            }
                            Thread.sleep(40);
                        }
                    }
                    return null;
                });
            }
            reading.await(20, TimeUnit.SECONDS);
            Thread.sleep(200);
            long start = System.nanoTime();
            try (Lease w = clients.get(2).readWriteLock(name).writeLock().acquire(Duration.ofSeconds(20))) {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                System.out.printf("[%s] writer among 4 overlapping readers acquired after %d ms%n", fixture.name(), ms);
                written.set(true);
                assertThat(w.isValid()).isTrue();
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (readsAfterWrite.get() == 0 && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertThat(readsAfterWrite.get()).as("readers resume after the writer").isPositive();
        } finally {
            stop.set(true);
            pool.shutdown();
            pool.awaitTermination(30, TimeUnit.SECONDS);
            clients.forEach(LockClient::close);
        }
    }
}
