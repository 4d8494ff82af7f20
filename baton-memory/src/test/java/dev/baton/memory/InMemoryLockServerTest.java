package dev.baton.memory;

import dev.baton.LockBackendException;
import dev.baton.LockInfo;
import dev.baton.spi.AcquireRequest;
import dev.baton.spi.AcquireRequest.Patience;
import dev.baton.spi.AcquireResult;
import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;
import dev.baton.spi.ReleaseListener;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The server's semantics at the SPI, with a clock the test moves: expiry, matching, the line, read-write modes,
 * introspection, notifications and the fault hooks. (The contract ladder checks the same through the core.)
 */
class InMemoryLockServerTest {
    private static final Duration LEASE = Duration.ofSeconds(10);
    private final ManualClock clock = new ManualClock();
    private final InMemoryLockServer server = InMemoryLockServer.create(clock);

    /** Release notifications one client heard. */
    private static final class Heard implements ReleaseListener {
        final List<String> released = new CopyOnWriteArrayList<>();
        final List<String> resynchronized = new CopyOnWriteArrayList<>();

        @Override
        public void released(String name) {
            released.add(name);
        }

        @Override
        public void resynchronize() {
            resynchronized.add("all");
        }
    }

    private InMemoryBackend connect(String clientId, Heard heard) {
        InMemoryBackend b = new InMemoryBackend(server);
        b.listen(heard);
        b.start(clientId);
        return b;
    }

    private InMemoryBackend connect(String clientId) {
        return connect(clientId, new Heard());
    }

    private static AcquireRequest waiting(String name, String owner) {
        return new AcquireRequest(name, LockMode.EXCLUSIVE, owner, LEASE, Patience.WAIT);
    }

    private static AcquireRequest once(String name, String owner) {
        return new AcquireRequest(name, LockMode.EXCLUSIVE, owner, LEASE, Patience.TRY_ONCE);
    }

    private static AcquireRequest rw(String name, LockMode mode, String owner) {
        return new AcquireRequest(name, mode, owner, LEASE, Patience.WAIT);
    }

    private static long granted(AcquireResult r) {
        assertThat(r).isInstanceOf(AcquireResult.Granted.class);
        return ((AcquireResult.Granted) r).token();
    }

    private static AcquireResult.Busy busy(AcquireResult r) {
        assertThat(r).isInstanceOf(AcquireResult.Busy.class);
        return (AcquireResult.Busy) r;
    }

    @Test
    void aLeaseEndsExactlyWhenTheServersClockSaysAndTheNextTokenIsGreater() {
        InMemoryBackend a = connect("a");
        InMemoryBackend b = connect("b");
        long first = granted(a.tryAcquire(once("x", "a#1")));
        clock.advance(LEASE.minusMillis(1));
        AcquireResult.Busy held = busy(b.tryAcquire(once("x", "b#1")));
        assertThat(held.holder()).isEqualTo("a#1");
        assertThat(held.token()).isEqualTo(first);
        assertThat(held.remaining()).isEqualTo(Duration.ofMillis(1));
        clock.advance(Duration.ofMillis(1));
        long second = granted(b.tryAcquire(once("x", "b#1")));
        assertThat(second).isGreaterThan(first);
        assertThat(a.renew(List.of(new LeaseKey("x", "a#1", first)), LEASE)).as("the stale holder renews nothing")
                .isEmpty();
        assertThat(a.release(new LeaseKey("x", "a#1", first))).as("nor releases its successor").isFalse();
        assertThat(a.confirm(new LeaseKey("x", "a#1", first))).isFalse();
        assertThat(b.confirm(new LeaseKey("x", "b#1", second))).isTrue();
    }

    @Test
    void releaseRenewalAndConfirmationMatchNameOwnerTokenAndMode() {
        InMemoryBackend a = connect("a");
        long t = granted(a.tryAcquire(once("x", "a#1")));
        LeaseKey key = new LeaseKey("x", "a#1", t);
        for (LeaseKey wrong : List.of(new LeaseKey("y", "a#1", t), new LeaseKey("x", "a#2", t),
                new LeaseKey("x", "a#1", t + 1), new LeaseKey("x", "a#1", t, LockMode.WRITE))) {
            assertThat(a.confirm(wrong)).as("confirm %s", wrong).isFalse();
            assertThat(a.renew(List.of(wrong), LEASE)).as("renew %s", wrong).isEmpty();
            assertThat(a.release(wrong)).as("release %s", wrong).isFalse();
        }
        clock.advance(LEASE.minusSeconds(1));
        assertThat(a.renew(List.of(key), LEASE)).containsExactly(key);
        clock.advance(LEASE.minusMillis(1));
        assertThat(a.confirm(key)).as("renewed from the server's now").isTrue();
        assertThat(a.release(key)).isTrue();
        assertThat(a.release(key)).as("once").isFalse();
        assertThat(a.confirm(key)).isFalse();
    }

    @Test
    void aFreeLockGoesToTheHeadOfTheLineAndNobodyBargesPast() {
        InMemoryBackend a = connect("a");
        InMemoryBackend b = connect("b");
        InMemoryBackend c = connect("c");
        InMemoryBackend d = connect("d");
        long t = granted(a.tryAcquire(once("x", "a#1")));
        busy(b.tryAcquire(waiting("x", "b#1")));
        busy(c.tryAcquire(waiting("x", "c#1")));
        assertThat(d.tryAcquire(once("x", "d#1"))).as("held").isInstanceOf(AcquireResult.Busy.class);
        assertThat(server.waiting("x")).as("a try-once takes no place").containsExactly("b#1", "c#1");
        a.release(new LeaseKey("x", "a#1", t));

        AcquireResult.Busy barging = busy(d.tryAcquire(once("x", "d#1")));
        assertThat(barging.holder()).as("a free lock with a line names its head").isEqualTo("b#1");
        assertThat(barging.token()).isEqualTo(-1);
        assertThat(barging.remaining()).as("a live waiter's place does not run out").isNull();
        assertThat(busy(c.tryAcquire(waiting("x", "c#1"))).holder()).as("second in line waits").isEqualTo("b#1");
        long tb = granted(b.tryAcquire(waiting("x", "b#1")));
        assertThat(server.waiting("x")).containsExactly("c#1");
        b.release(new LeaseKey("x", "b#1", tb));
        assertThat(granted(c.tryAcquire(waiting("x", "c#1")))).isGreaterThan(tb);
        assertThat(server.waiting("x")).isEmpty();
    }

    @Test
    void withdrawingAPlaceLetsTheNextInLineThroughAndToleratesAPlaceAlreadyGone() {
        InMemoryBackend a = connect("a");
        InMemoryBackend b = connect("b");
        Heard cHeard = new Heard();
        InMemoryBackend c = connect("c", cHeard);
        long t = granted(a.tryAcquire(once("x", "a#1")));
        busy(b.tryAcquire(waiting("x", "b#1")));
        busy(c.tryAcquire(waiting("x", "c#1")));
        a.release(new LeaseKey("x", "a#1", t));
        cHeard.released.clear();
        b.withdraw(waiting("x", "b#1"));
        assertThat(cHeard.released).as("the next in line is woken").containsExactly("x");
        b.withdraw(waiting("x", "b#1"));
        b.withdraw(once("never-asked", "b#1"));
        c.withdraw(waiting("x", "b#1")); // another client cannot remove b's place (there is none left anyway)
        granted(c.tryAcquire(waiting("x", "c#1")));
    }

    @Test
    void readersShareAWriterIsAloneAndAWaitingWriterHoldsBackNewReaders() {
        InMemoryBackend a = connect("a");
        InMemoryBackend b = connect("b");
        InMemoryBackend c = connect("c");
        long r1 = granted(a.tryAcquire(rw("x", LockMode.READ, "a#1")));
        long r2 = granted(b.tryAcquire(rw("x", LockMode.READ, "b#1")));
        assertThat(granted(c.tryAcquire(waiting("x", "c#9")))).as("the plain lock of that name is another lock")
                .isPositive();
        AcquireResult.Busy w = busy(c.tryAcquire(rw("x", LockMode.WRITE, "c#1")));
        assertThat(w.holder()).isIn("a#1", "b#1");
        assertThat(server.waiting("x", true)).containsExactly("c#1");
        AcquireResult.Busy late = busy(a.tryAcquire(rw("x", LockMode.READ, "a#2")));
        assertThat(late.holder()).as("a new reader waits behind the waiting writer").isEqualTo("c#1");
        a.release(new LeaseKey("x", "a#1", r1, LockMode.READ));
        busy(c.tryAcquire(rw("x", LockMode.WRITE, "c#1")));
        b.release(new LeaseKey("x", "b#1", r2, LockMode.READ));
        long wt = granted(c.tryAcquire(rw("x", LockMode.WRITE, "c#1")));
        assertThat(wt).isGreaterThan(r2);
        assertThat(busy(a.tryAcquire(rw("x", LockMode.READ, "a#2"))).holder()).isEqualTo("c#1");
        // readers queued behind the writer all enter together once it is gone
        busy(b.tryAcquire(rw("x", LockMode.READ, "b#2")));
        c.release(new LeaseKey("x", "c#1", wt, LockMode.WRITE));
        granted(b.tryAcquire(rw("x", LockMode.READ, "b#2")));
        granted(a.tryAcquire(rw("x", LockMode.READ, "a#2")));
    }

    @Test
    void inspectShowsLeaseRowsLikeTheLeaseTable() {
        InMemoryBackend a = connect("a");
        long tx = granted(a.tryAcquire(once("x", "a#1")));
        long ty = granted(a.tryAcquire(once("y", "a#1")));
        granted(a.tryAcquire(rw("z", LockMode.READ, "a#1")));
        busy(connect("b").tryAcquire(waiting("x", "b#1")));
        clock.advance(Duration.ofSeconds(1));
        a.release(new LeaseKey("y", "a#1", ty));
        List<LockInfo> infos = a.inspect();
        assertThat(infos).extracting(LockInfo::name).as("plain locks granted, by name").containsExactly("x", "y");
        LockInfo x = infos.get(0);
        assertThat(x.held()).isTrue();
        assertThat(x.holder()).isEqualTo("a#1");
        assertThat(x.fencingToken()).isEqualTo(tx);
        assertThat(x.expiresAt()).isEqualTo(x.acquiredAt().plus(LEASE));
        LockInfo y = infos.get(1);
        assertThat(y.held()).isFalse();
        assertThat(y.holder()).isNull();
        assertThat(y.fencingToken()).as("the last grant's token").isEqualTo(ty);
        assertThat(y.expiresAt()).as("released at the server's now").isEqualTo(clock.instant());
    }

    @Test
    void aCutOffClientsCallsFailItHearsNothingAndIsResynchronizedWhenRestored() {
        Heard aHeard = new Heard();
        InMemoryBackend a = connect("a", aHeard);
        InMemoryBackend b = connect("b");
        InMemoryLockServer.CutOff cut = server.cutOff(client("a"));
        assertThatThrownBy(() -> a.tryAcquire(once("x", "a#1"))).isInstanceOf(LockBackendException.class)
                .hasMessageContaining(server.description()).hasMessageContaining("acquire of 'x'")
                .hasMessageContaining("a is cut off");
        assertThatThrownBy(() -> a.renew(List.of(), LEASE)).isInstanceOf(LockBackendException.class);
        assertThatThrownBy(a::inspect).isInstanceOf(LockBackendException.class);
        long t = granted(b.tryAcquire(once("x", "b#1")));
        b.release(new LeaseKey("x", "b#1", t));
        assertThat(aHeard.released).as("cut off: no notifications").isEmpty();
        cut.close();
        cut.close();
        assertThat(aHeard.resynchronized).as("told to retry everything, once").hasSize(1);
        granted(a.tryAcquire(once("x", "a#1")));
    }

    @Test
    void aCrashedWaitersPlaceEndsOneLeaseAfterTheCrashAndACrashedHoldersLeaseRunsOut() {
        InMemoryBackend a = connect("a");
        InMemoryBackend b = connect("b");
        InMemoryBackend c = connect("c");
        long t = granted(a.tryAcquire(once("x", "a#1")));
        busy(b.tryAcquire(waiting("x", "b#1")));
        busy(c.tryAcquire(waiting("x", "c#1")));
        a.release(new LeaseKey("x", "a#1", t));
        long held = granted(a.tryAcquire(once("held", "a#1")));
        server.crash(client("b"));
        server.crash(client("a"));
        assertThatThrownBy(() -> b.withdraw(waiting("x", "b#1"))).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("crashed");
        clock.advance(LEASE.minusMillis(1));
        AcquireResult.Busy blocked = busy(c.tryAcquire(waiting("x", "c#1")));
        assertThat(blocked.holder()).as("the dead waiter's place is still at the head").isEqualTo("b#1");
        assertThat(blocked.remaining()).as("until one lease after the crash").isEqualTo(Duration.ofMillis(1));
        assertThat(busy(c.tryAcquire(once("held", "c#1"))).holder()).isEqualTo("a#1");
        clock.advance(Duration.ofMillis(1));
        assertThat(server.waiting("x")).as("the dead client's place ended").containsExactly("c#1");
        granted(c.tryAcquire(waiting("x", "c#1")));
        assertThat(granted(c.tryAcquire(once("held", "c#1")))).as("the crashed holder's lease ran out")
                .isGreaterThan(held);
    }

    @Test
    void closingAReachableClientWithdrawsItsPlacesAndWakesTheOthers() {
        InMemoryBackend a = connect("a");
        InMemoryBackend b = connect("b");
        Heard cHeard = new Heard();
        InMemoryBackend c = connect("c", cHeard);
        granted(a.tryAcquire(once("x", "a#1")));
        busy(b.tryAcquire(waiting("x", "b#1")));
        granted(a.tryAcquire(rw("y", LockMode.READ, "a#1")));
        busy(b.tryAcquire(rw("y", LockMode.WRITE, "b#1")));
        busy(c.tryAcquire(waiting("x", "c#1")));
        b.close();
        assertThat(server.waiting("x")).containsExactly("c#1");
        assertThat(server.waiting("y", true)).isEmpty();
        assertThat(cHeard.released).contains("x", "y");
        assertThatThrownBy(() -> b.tryAcquire(once("x", "b#1"))).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> server.crash(client("b"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not connected");
    }

    @Test
    void expireEndsEveryLiveGrantOfTheNameAndCountsThem() {
        InMemoryBackend a = connect("a");
        long t = granted(a.tryAcquire(once("x", "a#1")));
        granted(a.tryAcquire(rw("x", LockMode.READ, "a#2")));
        assertThat(server.expire("x")).isEqualTo(2);
        assertThat(server.expire("x")).isZero();
        assertThat(a.confirm(new LeaseKey("x", "a#1", t))).isFalse();
        assertThat(granted(connect("b").tryAcquire(rw("x", LockMode.WRITE, "b#1")))).isGreaterThan(t);
    }

    /** A stand-in LockClient that only carries a client id, for the server's fault hooks. */
    private static dev.baton.LockClient client(String id) {
        return (dev.baton.LockClient) java.lang.reflect.Proxy.newProxyInstance(
                InMemoryLockServerTest.class.getClassLoader(), new Class<?>[] {dev.baton.LockClient.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("clientId")) {
                        return id;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void badArgumentsAreRefusedNamingThem() {
        assertThatThrownBy(() -> InMemoryLockServer.create(null)).hasMessageContaining("clock");
        assertThatThrownBy(() -> InMemoryLocks.builder(null)).hasMessageContaining("server");
        assertThatThrownBy(() -> server.expire(null)).hasMessageContaining("name");
        assertThatThrownBy(() -> server.cutOff(client("nobody"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nobody");
        assertThat(server.toString()).isEqualTo(server.description()).startsWith("in-memory (server ");
    }
}
