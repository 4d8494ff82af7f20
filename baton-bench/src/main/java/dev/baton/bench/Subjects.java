package dev.baton.bench;

import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Everything measured, in table order. A new Baton strategy joins with one {@link BatonSubject} entry here,
 * for example a session strategy: {@code new BatonSubject("baton-advisory-pg", Db.POSTGRESQL,
 * "raw-advisory-pg", "server lock queue", ds -> JdbcLocks.builder(ds)....)}.
 */
final class Subjects {
    /** The Baton table used by the benchmark, so it never touches the tests' or a user's table. */
    static final String BATON_TABLE = "bench_baton_locks";

    private Subjects() {
    }

    static List<Subject> all() {
        List<Subject> all = new ArrayList<>();
        all.add(new BatonSubject("baton-lease-pg", Servers.Db.POSTGRESQL, "raw-lease-pg",
                "fair: a line of waiters in <table>_queue, the head woken by LISTEN/NOTIFY on release (none with nobody in"
                        + " line); releases and tickets not flushed; same client: woken by the release at once",
                ds -> JdbcLocks.builder(ds).tableName(BATON_TABLE).createTableIfMissing().clientIdPrefix("bench")));
        all.add(new BatonSubject("baton-lease-mariadb", Servers.Db.MARIADB, "raw-lease-mariadb",
                "fair: a line of waiters in <table>_queue (a MEMORY table); each waits on the server (GET_LOCK) for the bell of"
                        + " the one ahead, the head for the holder's, let go by the release; same client: woken by the release at once",
                ds -> JdbcLocks.builder(ds).tableName(BATON_TABLE).createTableIfMissing().clientIdPrefix("bench")));
        all.add(new BatonSubject("baton-lease-sqlite", Servers.Db.SQLITE, null,
                "fair: a line of waiters in <table>_queue; each looks again at a pace set by the line, 1-100 ms"
                        + " (the head about every half hand-over); same client: woken by the release at once",
                ds -> JdbcLocks.builder(ds).tableName(BATON_TABLE).createTableIfMissing().clientIdPrefix("bench")));
        all.add(new BatonSubject("baton-session-pg", Servers.Db.POSTGRESQL, "raw-advisory-pg",
                "server-side pg_advisory_lock under lock_timeout (one waiting thread per client); other threads"
                        + " poll 10-500 ms and are woken at once by releases in their client",
                ds -> JdbcLocks.builder(ds).tableName(BATON_TABLE).createTableIfMissing().strategy(Strategy.SESSION)
                        .clientIdPrefix("bench")));
        all.add(new BatonSubject("baton-session-mariadb", Servers.Db.MARIADB, "raw-getlock-mariadb",
                "server-side GET_LOCK with a timeout (one waiting thread per client); other threads poll 10-500 ms"
                        + " and are woken at once by releases in their client",
                ds -> JdbcLocks.builder(ds).tableName(BATON_TABLE).createTableIfMissing().strategy(Strategy.SESSION)
                        .clientIdPrefix("bench")));
        all.add(new BatonRedisSubject());
        all.add(new BatonZooKeeperSubject());
        all.addAll(RawSubjects.all());
        all.addAll(Competitors.all());
        return all;
    }

    static Subject byId(String id) {
        return all().stream().filter(s -> s.id().equals(id)).findFirst()
                .orElseThrow(() -> new NoSuchElementException("no subject '" + id + "'"));
    }
}
