package dev.baton.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The raw primitives each strategy is built on, written as minimally as a correct lock on them can be: the
 * best an implementation on that primitive could do. Not re-entrant, no renewal, no fencing beyond what
 * the primitive gives. JDBC ones keep one connection per thread (session locks need it; the lease row
 * uses it to take the pool out of the picture).
 */
final class RawSubjects {
    /** Fixed poll interval of the raw primitives that cannot block on the server. */
    static final long POLL_NANOS = 1_000_000;

    private RawSubjects() {
    }

    static List<Subject> all() {
        return List.of(
                new JdbcRaw("raw-lease-pg", Servers.Db.POSTGRESQL, RawKind.LEASE_ROW),
                new JdbcRaw("raw-lease-mariadb", Servers.Db.MARIADB, RawKind.LEASE_ROW),
                new JdbcRaw("raw-advisory-pg", Servers.Db.POSTGRESQL, RawKind.ADVISORY),
                new JdbcRaw("raw-getlock-mariadb", Servers.Db.MARIADB, RawKind.GET_LOCK),
                new RedisRaw());
    }

    enum RawKind { LEASE_ROW, ADVISORY, GET_LOCK }

    static final String LEASE_TABLE = "bench_raw_lease";

    /** Creates the raw lease table; its rows are inserted on first use of a name. */
    static void createLeaseTable(Servers.Db db) throws SQLException {
        try (Connection c = Servers.connect(db, "prepare"); var st = c.createStatement()) {
            st.execute(db == Servers.Db.POSTGRESQL
                    ? "CREATE TABLE IF NOT EXISTS " + LEASE_TABLE + " (name text PRIMARY KEY, owner text,"
                      + " token bigint NOT NULL DEFAULT 0, expires_at timestamptz NOT NULL DEFAULT now())"
                    : "CREATE TABLE IF NOT EXISTS " + LEASE_TABLE + " (name varchar(255) PRIMARY KEY, owner varchar(255),"
                      + " token bigint NOT NULL DEFAULT 0, expires_at timestamp(6) NOT NULL DEFAULT UTC_TIMESTAMP(6))"
                      + " ENGINE=InnoDB");
        }
    }

    static final class JdbcRaw implements Subject {
        private final String id;
        private final Servers.Db db;
        private final RawKind kind;

        JdbcRaw(String id, Servers.Db db, RawKind kind) {
            this.id = id;
            this.db = db;
            this.kind = kind;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public Kind kind() {
            return Kind.RAW;
        }

        @Override
        public String server() {
            return db.id;
        }

        @Override
        public String library() {
            return switch (kind) {
                case LEASE_ROW -> "conditional UPDATE of a lease row (this benchmark)";
                case ADVISORY -> "pg_advisory_lock / pg_advisory_unlock (this benchmark)";
                case GET_LOCK -> "GET_LOCK / RELEASE_LOCK (this benchmark)";
            };
        }

        @Override
        public String waits() {
            return kind == RawKind.LEASE_ROW ? "poll every 1 ms" : "blocks in the server (lock queue)";
        }

        @Override
        public Client open(String name, Duration leaseTime) {
            String owner = name + "/" + UUID.randomUUID();
            var connections = new ConcurrentHashMap<Thread, Connection>();
            var rowsMade = ConcurrentHashMap.<String>newKeySet();
            return new Client() {
                Connection connection() throws SQLException {
                    Connection c = connections.get(Thread.currentThread());
                    if (c == null) {
                        c = Servers.connect(db, name);
                        connections.put(Thread.currentThread(), c);
                    }
                    return c;
                }

                @Override
                public Held acquire(String lock) throws Exception {
                    Connection c = connection();
                    return switch (kind) {
                        case LEASE_ROW -> leaseRow(c, lock, owner + "#" + Thread.currentThread().getId(), rowsMade.add(lock));
                        case ADVISORY -> advisory(c, lock);
                        case GET_LOCK -> getLock(c, lock);
                    };
                }

                @Override
                public void close() throws SQLException {
                    for (Connection c : connections.values()) {
                        c.close();
                    }
                }
            };
        }

        private Held leaseRow(Connection c, String lock, String owner, boolean firstUse) throws SQLException {
            String now = db == Servers.Db.POSTGRESQL ? "now()" : "UTC_TIMESTAMP(6)";
            String lease = db == Servers.Db.POSTGRESQL ? "now() + interval '10 seconds'"
                    : "UTC_TIMESTAMP(6) + INTERVAL 10 SECOND";
            if (firstUse) { // the row exists from then on: a take is then exactly one conditional UPDATE
                try (PreparedStatement ps = c.prepareStatement(db == Servers.Db.POSTGRESQL
                        ? "INSERT INTO " + LEASE_TABLE + " (name) VALUES (?) ON CONFLICT DO NOTHING"
                        : "INSERT IGNORE INTO " + LEASE_TABLE + " (name) VALUES (?)")) {
                    ps.setString(1, lock);
                    ps.executeUpdate();
                }
            }
            try (PreparedStatement take = c.prepareStatement("UPDATE " + LEASE_TABLE + " SET owner = ?,"
                    + " token = token + 1, expires_at = " + lease + " WHERE name = ? AND expires_at <= " + now)) {
                take.setString(1, owner);
                take.setString(2, lock);
                while (take.executeUpdate() == 0) {
                    LockSupport.parkNanos(POLL_NANOS);
                }
            }
            return () -> {
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + LEASE_TABLE + " SET owner = NULL,"
                        + " expires_at = " + now + " WHERE name = ? AND owner = ?")) {
                    ps.setString(1, lock);
                    ps.setString(2, owner);
                    ps.executeUpdate();
                }
            };
        }

        private static long key(String lock) {
            // FNV-1a 64 over UTF-8: stable across JVMs
            long h = 0xcbf29ce484222325L;
            for (byte b : lock.getBytes(StandardCharsets.UTF_8)) {
                h = (h ^ (b & 0xff)) * 0x100000001b3L;
            }
            return h;
        }

        private static Held advisory(Connection c, String lock) throws SQLException {
            long key = key(lock);
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_lock(?)")) {
                ps.setLong(1, key);
                ps.executeQuery().close();
            }
            return () -> {
                try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
                    ps.setLong(1, key);
                    ps.executeQuery().close();
                }
            };
        }

        private static Held getLock(Connection c, String lock) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, 3600)")) {
                ps.setString(1, lock);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next() || rs.getInt(1) != 1) {
                        throw new IllegalStateException("GET_LOCK(" + lock + ") did not return 1");
                    }
                }
            }
            return () -> {
                try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
                    ps.setString(1, lock);
                    ps.executeQuery().close();
                }
            };
        }
    }

    /** {@code SET key owner NX PX} to take, a Lua compare-and-delete to release, one Lettuce connection per client. */
    static final class RedisRaw implements Subject {
        static final String RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then"
                + " return redis.call('del', KEYS[1]) else return 0 end";

        @Override
        public String id() {
            return "raw-setnx-redis";
        }

        @Override
        public Kind kind() {
            return Kind.RAW;
        }

        @Override
        public String server() {
            return "redis";
        }

        @Override
        public String library() {
            return "SET NX PX + Lua compare-and-delete (this benchmark, Lettuce " + Subject.versionOf("io.lettuce", "lettuce-core") + ")";
        }

        @Override
        public String waits() {
            return "poll every 1 ms";
        }

        @Override
        public Client open(String name, Duration leaseTime) {
            RedisClient client = RedisClient.create(Servers.REDIS_URI);
            StatefulRedisConnection<String, String> conn = client.connect();
            RedisCommands<String, String> redis = conn.sync();
            String sha = redis.scriptLoad(RELEASE);
            String owner = name + "/" + UUID.randomUUID();
            SetArgs args = SetArgs.Builder.nx().px(10_000);
            return new Client() {
                @Override
                public Held acquire(String lock) {
                    String key = "bench:raw:" + lock;
                    String me = owner + "#" + Thread.currentThread().getId();
                    while (!"OK".equals(redis.set(key, me, args))) {
                        LockSupport.parkNanos(POLL_NANOS);
                    }
                    return () -> redis.evalsha(sha, ScriptOutputType.INTEGER, new String[]{key}, me);
                }

                @Override
                public void close() throws Exception {
                    conn.close();
                    client.shutdown();
                }
            };
        }
    }
}
