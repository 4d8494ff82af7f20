package dev.baton.bench;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.net.URI;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * The libraries users would pick instead, each used as its documentation shows, with its defaults unless
 * a default would make the comparison meaningless (stated where so).
 */
final class Competitors {
    /**
     * ShedLock has no blocking acquire: the benchmark retries at this fixed interval, 1 ms, its strongest
     * configuration (issue 13 compares every peer so; 10 ms until 2026-11-25).
     */
    static final Duration SHEDLOCK_RETRY = Duration.ofMillis(1);

    /**
     * The {@code idleBetweenTries} of the Spring registries' tuned subjects ({@code -1ms}; their default is 100 ms),
     * their strongest configuration: of 1, 5 and 10 ms, measured in W2 (2026-11-25, a loaded machine), 1 ms gave the
     * most cross-client hand-overs on every registry (JDBC PostgreSQL ~200/s vs ~140 and ~120; JDBC MariaDB ~150/s
     * vs ~110 and ~95; Redis spin lock ~850/s vs ~285 and ~160), while longer pauses let the releasing process keep
     * the lock through its local {@code ReentrantLock}; its wait p99 was the lowest on Redis, about even on
     * PostgreSQL, and higher on MariaDB (~260 ms vs ~195 and ~205).
     */
    static final Duration SPRING_IDLE = Duration.ofMillis(1);

    private Competitors() {
    }

    static List<Subject> all() {
        return List.of(new RedissonLock(), new CuratorMutex(),
                new ShedLockJdbc(Servers.Db.POSTGRESQL), new ShedLockJdbc(Servers.Db.MARIADB),
                new SpringJdbc(Servers.Db.POSTGRESQL, null), new SpringJdbc(Servers.Db.POSTGRESQL, SPRING_IDLE),
                new SpringJdbc(Servers.Db.MARIADB, null), new SpringJdbc(Servers.Db.MARIADB, SPRING_IDLE),
                new SpringRedis(false, null), new SpringRedis(false, SPRING_IDLE), new SpringRedis(true, null));
    }

    /** An id's suffix for a tuned pause: {@code -5ms}, or nothing for the library's default. */
    private static String suffix(Duration idle) {
        return idle == null ? "" : "-" + idle.toMillis() + "ms";
    }

    abstract static class Base implements Subject {
        private final String id;
        private final String server;

        Base(String id, String server) {
            this.id = id;
            this.server = server;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public Kind kind() {
            return Kind.COMPETITOR;
        }

        @Override
        public String server() {
            return server;
        }
    }

    /** Redisson {@code RLock} (re-entrant; watchdog renewal every 10 s for a 30 s lease). */
    static final class RedissonLock extends Base {
        RedissonLock() {
            super("redisson-rlock", "redis");
        }

        @Override
        public String library() {
            return "Redisson " + Subject.versionOf("org.redisson", "redisson") + " RLock";
        }

        @Override
        public String baseline() {
            return "raw-setnx-redis";
        }

        @Override
        public String waits() {
            return "pub/sub release message on a per-lock channel; else sleeps until the holder's TTL";
        }

        @Override
        public boolean manyLocks() {
            return true;
        }

        @Override
        public Client open(String name, Duration leaseTime) {
            Config config = new Config();
            config.useSingleServer().setAddress(Servers.REDIS_URI).setClientName(name)
                    .setConnectionMinimumIdleSize(2).setConnectionPoolSize(8)
                    .setSubscriptionConnectionMinimumIdleSize(1);
            if (leaseTime != null) {
                config.setLockWatchdogTimeout(leaseTime.toMillis()); // renews every third of it
            }
            RedissonClient redisson = Redisson.create(config);
            return new Client() {
                @Override
                public Held acquire(String lock) {
                    RLock l = redisson.getLock("bench:redisson:" + lock);
                    l.lock();
                    return l::unlock;
                }

                @Override
                public void close() {
                    redisson.shutdown(0, 2, TimeUnit.SECONDS);
                }
            };
        }
    }

    /** Apache Curator {@code InterProcessMutex} (re-entrant, fair: sequential ephemeral nodes). */
    static final class CuratorMutex extends Base {
        CuratorMutex() {
            super("curator-mutex", "zookeeper");
        }

        @Override
        public String library() {
            return "Apache Curator " + Subject.versionOf("org.apache.curator", "curator-recipes") + " InterProcessMutex (ZooKeeper "
                    + org.apache.zookeeper.Version.getFullVersion().split("[- ]")[0] + " client; server 3.9.5 as its own process)";
        }

        @Override
        public String waits() {
            return "ZooKeeper watch on the predecessor node (FIFO queue)";
        }

        @Override
        public boolean manyLocks() {
            return true;
        }

        @Override
        public Client open(String name, Duration leaseTime) throws InterruptedException {
            CuratorFramework curator = CuratorFrameworkFactory.newClient(Servers.zk(), 30_000, 10_000,
                    new ExponentialBackoffRetry(100, 3));
            curator.start();
            if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
                curator.close();
                throw new IllegalStateException("Curator did not connect to " + Servers.zk());
            }
            var mutexes = new ConcurrentHashMap<String, InterProcessMutex>();
            return new Client() {
                @Override
                public Held acquire(String lock) throws Exception {
                    InterProcessMutex m = mutexes.computeIfAbsent(lock,
                            l -> new InterProcessMutex(curator, "/bench/curator/" + l));
                    m.acquire();
                    return m::release;
                }

                @Override
                public void close() {
                    curator.close();
                }
            };
        }
    }

    /** ShedLock's {@code JdbcTemplateLockProvider} with database time; made blocking by a retry loop. */
    static final class ShedLockJdbc extends Base {
        static final String TABLE = "bench_shedlock";
        private final Servers.Db db;

        ShedLockJdbc(Servers.Db db) {
            super("shedlock-jdbc-" + (db == Servers.Db.POSTGRESQL ? "pg" : db.id), db.id);
            this.db = db;
        }

        @Override
        public String library() {
            return "ShedLock " + Subject.versionOf("net.javacrumbs.shedlock", "shedlock-provider-jdbc-template") + " JdbcTemplateLockProvider (usingDbTime)";
        }

        @Override
        public String baseline() {
            return db == Servers.Db.POSTGRESQL ? "raw-lease-pg" : "raw-lease-mariadb";
        }

        @Override
        public String waits() {
            return "no blocking acquire: benchmark retries every " + SHEDLOCK_RETRY.toMillis() + " ms";
        }

        static void createTable(Servers.Db db) throws Exception {
            try (Connection c = Servers.connect(db, "prepare"); var st = c.createStatement()) {
                st.execute(db == Servers.Db.POSTGRESQL
                        ? "CREATE TABLE IF NOT EXISTS " + TABLE + " (name VARCHAR(64) NOT NULL PRIMARY KEY,"
                          + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)"
                        : "CREATE TABLE IF NOT EXISTS " + TABLE + " (name VARCHAR(64) NOT NULL PRIMARY KEY,"
                          + " lock_until TIMESTAMP(3) NOT NULL, locked_at TIMESTAMP(3) NOT NULL,"
                          + " locked_by VARCHAR(255) NOT NULL)");
            }
        }

        @Override
        public Client open(String name, Duration leaseTime) {
            CountingDataSource ds = Servers.pool(db, name, 4);
            JdbcTemplateLockProvider provider = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration
                    .builder().withJdbcTemplate(new JdbcTemplate(ds)).withTableName(TABLE).usingDbTime().build());
            return new Client() {
                @Override
                public Held acquire(String lock) {
                    while (true) {
                        Optional<SimpleLock> l = provider.lock(new LockConfiguration(Instant.now(), lock,
                                Duration.ofSeconds(10), Duration.ZERO));
                        if (l.isPresent()) {
                            return l.get()::unlock;
                        }
                        LockSupport.parkNanos(SHEDLOCK_RETRY.toNanos());
                    }
                }

                @Override
                public long statements() {
                    return ds.statements.sum();
                }

                @Override
                public void close() {
                    ds.close();
                }
            };
        }
    }

    /**
     * Spring Integration {@code JdbcLockRegistry} over {@code DefaultLockRepository}: its defaults, or with
     * {@code idleBetweenTries} set (id suffix {@code -<n>ms}), the pause between a waiter's tries of the table.
     */
    static final class SpringJdbc extends Base {
        static final String PREFIX = "BENCH_";
        private final Servers.Db db;
        /** The registry's {@code idleBetweenTries}, or null for its default (100 ms). */
        private final Duration idle;

        SpringJdbc(Servers.Db db, Duration idle) {
            super("spring-jdbc-" + (db == Servers.Db.POSTGRESQL ? "pg" : db.id) + suffix(idle), db.id);
            this.db = db;
            this.idle = idle;
        }

        @Override
        public String library() {
            return "Spring Integration " + Subject.versionOf("org.springframework.integration", "spring-integration-jdbc") + " JdbcLockRegistry";
        }

        @Override
        public String baseline() {
            return db == Servers.Db.POSTGRESQL ? "raw-lease-pg" : "raw-lease-mariadb";
        }

        @Override
        public String waits() {
            return idle == null ? "local ReentrantLock, then polls the table every 100 ms (idleBetweenTries default)"
                    : "local ReentrantLock, then polls the table every " + idle.toMillis() + " ms (idleBetweenTries set, its best; default 100 ms)";
        }

        static void createTable(Servers.Db db) throws Exception {
            try (Connection c = Servers.connect(db, "prepare"); var st = c.createStatement()) {
                String ts = db == Servers.Db.POSTGRESQL ? "TIMESTAMP" : "DATETIME(6)";
                st.execute("CREATE TABLE IF NOT EXISTS " + PREFIX + "LOCK (LOCK_KEY CHAR(36) NOT NULL,"
                        + " REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36), CREATED_DATE " + ts + " NOT NULL,"
                        + " EXPIRED_AFTER " + ts + " NOT NULL, constraint " + PREFIX + "LOCK_PK primary key (LOCK_KEY, REGION))");
            }
        }

        @Override
        public Client open(String name, Duration leaseTime) {
            CountingDataSource ds = Servers.pool(db, name, 4);
            DefaultLockRepository repo = new DefaultLockRepository(ds);
            repo.setPrefix(PREFIX);
            repo.setTransactionManager(new DataSourceTransactionManager(ds));
            repo.afterPropertiesSet();
            repo.afterSingletonsInstantiated();
            repo.start();
            JdbcLockRegistry registry = new JdbcLockRegistry(repo);
            if (idle != null) {
                registry.setIdleBetweenTries(idle); // read by each lock when obtain() creates it
            }
            return new Client() {
                @Override
                public Held acquire(String lock) {
                    Lock l = registry.obtain(lock);
                    l.lock();
                    return l::unlock;
                }

                @Override
                public long statements() {
                    return ds.statements.sum();
                }

                @Override
                public void close() {
                    repo.stop();
                    repo.close();
                    ds.close();
                }
            };
        }
    }

    /**
     * Spring Integration {@code RedisLockRegistry}: its default (spin lock), the spin lock with
     * {@code idleBetweenTries} set (id suffix {@code -<n>ms}), or in {@code PUB_SUB_LOCK} mode, where a waiter is
     * woken by the release's message (issue 11 compares Baton with both modes).
     */
    static final class SpringRedis extends Base {
        private final boolean pubSub;
        /** The registry's {@code idleBetweenTries} (its spin lock's pause between tries), or null for 100 ms. */
        private final Duration idle;

        SpringRedis(boolean pubSub, Duration idle) {
            super((pubSub ? "spring-redis-pubsub" : "spring-redis") + suffix(idle), "redis");
            this.pubSub = pubSub;
            this.idle = idle;
        }

        @Override
        public String library() {
            return "Spring Integration " + Subject.versionOf("org.springframework.integration", "spring-integration-redis")
                    + " RedisLockRegistry (" + (pubSub ? "PUB_SUB_LOCK" : "SPIN_LOCK") + ")";
        }

        @Override
        public String baseline() {
            return "raw-setnx-redis";
        }

        @Override
        public String waits() {
            return pubSub ? "local ReentrantLock, then a pub/sub release message (PUB_SUB_LOCK)"
                    : idle == null ? "local ReentrantLock, then polls Redis every 100 ms (SPIN_LOCK, the default)"
                    : "local ReentrantLock, then polls Redis every " + idle.toMillis() + " ms (SPIN_LOCK, idleBetweenTries set, its best; default 100 ms)";
        }

        @Override
        public Client open(String name, Duration leaseTime) {
            URI uri = URI.create(Servers.REDIS_URI);
            LettuceConnectionFactory cf = new LettuceConnectionFactory(
                    new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()));
            cf.afterPropertiesSet();
            cf.start();
            RedisLockRegistry registry = new RedisLockRegistry(cf, pubSub ? "bench-spring-pubsub" : "bench-spring");
            if (pubSub) {
                registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
            }
            if (idle != null) {
                registry.setIdleBetweenTries(idle);
            }
            return new Client() {
                @Override
                public Held acquire(String lock) {
                    Lock l = registry.obtain(lock);
                    l.lock();
                    return l::unlock;
                }

                @Override
                public void close() {
                    registry.destroy();
                    cf.destroy();
                }
            };
        }
    }
}
