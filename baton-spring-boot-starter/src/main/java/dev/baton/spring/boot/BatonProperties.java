package dev.baton.spring.boot;

import dev.baton.jdbc.Strategy;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

/**
 * The {@code baton.*} properties of the auto-configured {@link dev.baton.LockClient}. A setting left unset keeps the
 * backend builder's default.
 */
@ConfigurationProperties("baton")
public class BatonProperties {
    /** Which backend the lock client uses. */
    public enum Backend {
        /** JDBC if there is a DataSource bean, else Redis, else ZooKeeper, whichever can be configured first. */
        AUTO,
        /** The application's DataSource (baton-jdbc). */
        JDBC,
        /** baton.redis.url, or the application's Lettuce RedisClient or Lettuce connection factory (baton-redis). */
        REDIS,
        /** baton.zookeeper.connect-string, or the application's CuratorFramework (baton-zookeeper). */
        ZOOKEEPER
    }

    /**
     * Whether to auto-configure a Baton LockClient and its meters. @WithLock methods stay on when false, with the
     * application's own LockClient bean.
     */
    private boolean enabled = true;
    /**
     * Which backend the lock client uses: auto (the first that can be configured, JDBC first), jdbc, redis or
     * zookeeper.
     */
    private Backend backend = Backend.AUTO;
    /**
     * The lease each grant and renewal gives, by the server's clock (default 10s; ZooKeeper: the session timeout). A
     * live holder renews it.
     */
    private Duration leaseTime;
    /** How often held leases are renewed, in one batch (default a third of the lease time). */
    private Duration renewInterval;
    /** A prefix of this client's id, shown in introspection (default the host name). */
    private String clientIdPrefix;
    /** How long a @WithLock method waits for its lock when the annotation names no wait (0: one attempt). */
    private Duration defaultWait = Duration.ZERO;

    private final Jdbc jdbc = new Jdbc();
    private final Redis redis = new Redis();
    private final Zookeeper zookeeper = new Zookeeper();
    private final Metrics metrics = new Metrics();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Backend getBackend() {
        return backend;
    }

    public void setBackend(Backend backend) {
        this.backend = backend;
    }

    public Duration getLeaseTime() {
        return leaseTime;
    }

    public void setLeaseTime(Duration leaseTime) {
        this.leaseTime = leaseTime;
    }

    public Duration getRenewInterval() {
        return renewInterval;
    }

    public void setRenewInterval(Duration renewInterval) {
        this.renewInterval = renewInterval;
    }

    public String getClientIdPrefix() {
        return clientIdPrefix;
    }

    public void setClientIdPrefix(String clientIdPrefix) {
        this.clientIdPrefix = clientIdPrefix;
    }

    public Duration getDefaultWait() {
        return defaultWait;
    }

    public void setDefaultWait(Duration defaultWait) {
        this.defaultWait = defaultWait;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Redis getRedis() {
        return redis;
    }

    public Zookeeper getZookeeper() {
        return zookeeper;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    /** The JDBC backend, over the application's DataSource. */
    public static class Jdbc {
        /** The strategy: lease (a row per lock, any database) or session (PostgreSQL/MariaDB session locks). */
        private Strategy strategy = Strategy.LEASE;
        /** The lease table (its sequence or counter takes a suffix). */
        private String table = "baton_locks";
        /**
         * Whether to create the table (and its sequence or counter) at startup if missing; turn off when Flyway or
         * Liquibase manages the schema.
         */
        private boolean createTable = true;
        /** Accept a server that acknowledges commits before they are on disk (a test server only). */
        private boolean allowUnflushedCommits;

        public Strategy getStrategy() {
            return strategy;
        }

        public void setStrategy(Strategy strategy) {
            this.strategy = strategy;
        }

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public boolean isCreateTable() {
            return createTable;
        }

        public void setCreateTable(boolean createTable) {
            this.createTable = createTable;
        }

        public boolean isAllowUnflushedCommits() {
            return allowUnflushedCommits;
        }

        public void setAllowUnflushedCommits(boolean allowUnflushedCommits) {
            this.allowUnflushedCommits = allowUnflushedCommits;
        }
    }

    /** The Redis backend. */
    public static class Redis {
        /**
         * A Redis URL (redis://, rediss://, redis-sentinel://) for a connection of Baton's own; else the application's
         * Lettuce client is used.
         */
        private String url;
        /** The prefix of every key Baton writes (default baton:). */
        private String keyPrefix;
        /** Accept a Redis that may evict keys (maxmemory with a policy other than noeviction). */
        private boolean allowEviction;

        public String getUrl() {
            return url;
        }

        public void setUrl(String url) {
            this.url = url;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public boolean isAllowEviction() {
            return allowEviction;
        }

        public void setAllowEviction(boolean allowEviction) {
            this.allowEviction = allowEviction;
        }
    }

    /** The ZooKeeper backend. */
    public static class Zookeeper {
        /**
         * A ZooKeeper connect string (host:port,...) for a session of Baton's own; else the application's
         * CuratorFramework is used.
         */
        private String connectString;
        /** The znode under which every lock lives (default /baton/locks). */
        private String rootPath;

        public String getConnectString() {
            return connectString;
        }

        public void setConnectString(String connectString) {
            this.connectString = connectString;
        }

        public String getRootPath() {
            return rootPath;
        }

        public void setRootPath(String rootPath) {
            this.rootPath = rootPath;
        }
    }

    /** The baton.* meters, when a MeterRegistry bean exists. */
    public static class Metrics {
        /** Whether to keep baton.* meters in the application's MeterRegistry. */
        private boolean enabled = true;
        /** How many distinct lock tag values are kept; later lock names are tagged _other. */
        private int maxLockNames = 100;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getMaxLockNames() {
            return maxLockNames;
        }

        public void setMaxLockNames(int maxLockNames) {
            this.maxLockNames = maxLockNames;
        }
    }
}
