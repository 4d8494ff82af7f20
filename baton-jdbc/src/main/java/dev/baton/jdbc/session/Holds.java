package dev.baton.jdbc.session;

import dev.baton.spi.LeaseKey;
import dev.baton.spi.LockMode;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this client holds, and is attempting, on its two sessions: the one owner of that state. Plain locks by server
 * key (a reservation while an attempt is in flight, then the grant with the session and session generation it is
 * on); read-write locks (PostgreSQL) by advisory key, with their mode, holders and reservations. Threads of one
 * client share its sessions, and a session may re-take a lock it holds, so a key is reserved here before the server
 * is asked: a key reserved by another thread is busy without a round trip.
 *
 * <p>Thread safety: the maps are concurrent; each {@link RwState} is guarded by its own monitor.
 */
final class Holds {
    /** A grant (or, with token -1 and no session, a reservation) and the session generation it was made on. */
    record Local(LeaseKey key, Session session, int generation) {
    }

    /** Guarded by its own monitor. {@code count} is holders plus attempts in flight, all of {@code mode}. */
    static final class RwState {
        LockMode mode;
        int count;
        final Map<LeaseKey, Local> holders = new HashMap<>();

        RwState(LockMode mode) {
            this.mode = mode;
        }
    }

    /** A read-write key's state after {@link #reserveRw}, and whether the caller's reservation was counted in it. */
    record RwReservation(RwState state, boolean reserved) {
    }

    private final SessionStatements sql;
    /** Server key → the local holder (token -1 while an attempt is in flight). */
    private final ConcurrentHashMap<String, Local> local = new ConcurrentHashMap<>();
    /** Read-write locks (PostgreSQL): advisory key → the client's holds and reservations on it. */
    private final ConcurrentHashMap<Long, RwState> rwLocal = new ConcurrentHashMap<>();

    Holds(SessionStatements sql) {
        this.sql = sql;
    }

    // ---- plain locks -----------------------------------------------------------------------------

    /** Reserves {@code key} with {@code reservation}; the holder or reservation already there, or null if reserved. */
    Local reserve(String key, Local reservation) {
        return local.putIfAbsent(key, reservation);
    }

    /** Records the grant at {@code key} (in place of the caller's reservation). */
    void keep(String key, Local grant) {
        local.put(key, grant);
    }

    /** Forgets {@code l} at {@code key}, if it is still the one there. */
    void remove(String key, Local l) {
        local.remove(key, l);
    }

    /** The holder or reservation at a plain lock's server key, or null. */
    Local at(String key) {
        return local.get(key);
    }

    // ---- read-write locks ------------------------------------------------------------------------

    /** Reserves {@code k} in {@code mode} if it is free here, or read and asked for reading (readers share). */
    RwReservation reserveRw(long k, LockMode mode) {
        boolean[] reserved = {false};
        RwState state = rwLocal.compute(k, (key, st) -> {
            if (st == null) {
                st = new RwState(mode);
            }
            synchronized (st) {
                if (st.count == 0 || (st.mode == LockMode.READ && mode == LockMode.READ)) {
                    st.mode = mode;
                    st.count++;
                    reserved[0] = true;
                }
            }
            return st;
        });
        return new RwReservation(state, reserved[0]);
    }

    /** Counts one holder or reservation out of {@code state}; the key is forgotten when none is left. */
    void unreserve(long k, RwState state) {
        rwLocal.computeIfPresent(k, (key, st) -> {
            synchronized (st) {
                if (st == state) {
                    st.count--;
                }
                return st.count == 0 ? null : st;
            }
        });
    }

    /** The client's state of a read-write key, or null. */
    RwState rw(long k) {
        return rwLocal.get(k);
    }

    /** Whether session {@code s} holds a grant in {@code state}. */
    static boolean heldOn(RwState state, Session s) {
        synchronized (state) {
            return state.holders.values().stream().anyMatch(l -> l.session() == s);
        }
    }

    /** The owner of one of the holders of {@code state}, or null. */
    static String anyHolder(RwState state) {
        synchronized (state) {
            return state.holders.keySet().stream().findFirst().map(LeaseKey::owner).orElse(null);
        }
    }

    static void keep(RwState state, LeaseKey lease, Local grant) {
        synchronized (state) {
            state.holders.put(lease, grant);
        }
    }

    static Local holder(RwState state, LeaseKey lease) {
        synchronized (state) {
            return state.holders.get(lease);
        }
    }

    /** Forgets the holder of {@code lease}; whether it was there. */
    static boolean remove(RwState state, LeaseKey lease) {
        synchronized (state) {
            return state.holders.remove(lease) != null;
        }
    }

    // ---- both ------------------------------------------------------------------------------------

    /** The client's record of a grant, or null if it holds no such grant. */
    Local granted(LeaseKey lease) {
        if (lease.mode() != LockMode.EXCLUSIVE) {
            RwState st = rwLocal.get(sql.rwKey(lease.name()));
            if (st == null) {
                return null;
            }
            synchronized (st) {
                return st.holders.get(lease);
            }
        }
        Local l = local.get(sql.serverKey(lease.name()));
        return l != null && lease.equals(l.key()) ? l : null;
    }

    /** Whether the client holds the grant {@code k} on a session that is still the one it was made on. */
    boolean alive(LeaseKey k) {
        if (k.mode() != LockMode.EXCLUSIVE) {
            RwState st = rwLocal.get(sql.rwKey(k.name()));
            if (st != null) {
                synchronized (st) {
                    Local l = st.holders.get(k);
                    return l != null && l.session().holds(l);
                }
            }
            return false;
        }
        Local l = local.get(sql.serverKey(k.name()));
        return l != null && l.key().equals(k) && l.session().holds(l);
    }

    /** Whether anything this client holds or attempts is on session {@code s}. */
    boolean anyOn(Session s) {
        return local.values().stream().anyMatch(l -> l.session() == s)
                || rwLocal.values().stream().anyMatch(st -> {
                    synchronized (st) {
                        return st.holders.values().stream().anyMatch(l -> l.session() == s);
                    }
                });
    }

    /** Forgets everything held on session {@code s} (it was discarded, and the server freed it). */
    void dropAll(Session s) {
        local.values().removeIf(l -> l.session() == s);
        for (Long key : List.copyOf(rwLocal.keySet())) {
            rwLocal.computeIfPresent(key, (k, st) -> {
                synchronized (st) {
                    int before = st.holders.size();
                    st.holders.values().removeIf(l -> l.session() == s);
                    st.count -= before - st.holders.size();
                    return st.count <= 0 ? null : st;
                }
            });
        }
    }

    void clear() {
        local.clear();
        rwLocal.clear();
    }
}
