package dev.baton.checker;

import dev.baton.LockInfo;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class DeadPlacesTest {
    private static final long MS = 1_000_000;

    private static LockInfo free(String name, String... line) {
        return lock(name, false, line);
    }

    private static LockInfo lock(String name, boolean held, String... line) {
        Instant now = Instant.EPOCH;
        return new LockInfo(name, held ? "h" : null, 1, null, null, held,
                java.util.Arrays.stream(line).map(o -> new LockInfo.Waiter(o, now, now)).toList());
    }

    private static DeadPlaces.Look look(long ms, LockInfo... locks) {
        return new DeadPlaces.Look(ms * MS, ms * MS + 5 * MS, List.of(locks));
    }

    /** "dead" died at 100 ms; everyone else lives. */
    private static final Map<String, Long> DIED = Map.of("dead", 100 * MS);

    private static List<DeadPlaces.Window> windows(DeadPlaces.Look... looks) {
        return DeadPlaces.windows(List.of(looks), o -> DIED.getOrDefault(o, Long.MAX_VALUE));
    }

    @Test
    void aFreeLockWithALiveWaiterBehindADeadPlaceIsOneWindowFromFirstToLastLook() {
        List<DeadPlaces.Window> w = windows(look(0, free("l", "dead", "live")), look(200, free("l", "dead", "live")),
                look(300, free("l", "dead", "live")), look(400, free("l", "dead", "live")),
                look(500, lock("l", true, "live")));
        assertThat(w).hasSize(1);
        // the first look began before the death: the window starts at the second look's end, ends at the last's start
        assertThat(w.get(0).from()).isEqualTo(205 * MS);
        assertThat(w.get(0).to()).isEqualTo(400 * MS);
        assertThat(w.get(0).waiter()).isEqualTo("live");
        assertThat(w.get(0).deadAhead()).containsExactly("dead");
    }

    @Test
    void aHeldLockADeadPlaceBehindTheWaiterOrNoLiveWaiterMakesNoWindow() {
        assertThat(windows(look(200, lock("l", true, "dead", "live")), look(300, free("l", "live", "dead")),
                look(400, free("l", "dead")), look(500, free("l", "dead", "dead")))).isEmpty();
    }

    @Test
    void aLookWithoutTheStateClosesTheWindow() {
        List<DeadPlaces.Window> w = windows(look(200, free("l", "dead", "live")), look(300, free("l", "dead", "live")),
                look(400, free("l")), look(500, free("l", "dead", "live")));
        assertThat(w).hasSize(2);
        assertThat(w.get(0).length()).isEqualTo(95 * MS);
        assertThat(w.get(1).length()).isZero();
    }
}
