package dev.baton.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.KeeperException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * W0: the physical limits, on one connection each: a read round trip and a single durable write.
 */
final class Floors {
    /** Floor ids in table order; each is "server-op". */
    static final List<String> IDS = List.of("postgresql-select1", "postgresql-update", "mariadb-select1",
            "mariadb-update", "sqlite-select1", "sqlite-update", "redis-ping", "zookeeper-exists",
            "zookeeper-setdata");

    static final String TABLE = "bench_floor";

    interface Op extends AutoCloseable {
        void run() throws Exception;

        @Override
        void close() throws Exception;
    }

    private Floors() {
    }

    static Op open(String id) throws Exception {
        return switch (id) {
            case "postgresql-select1" -> jdbc(Servers.Db.POSTGRESQL, "SELECT 1", true);
            case "postgresql-update" -> jdbc(Servers.Db.POSTGRESQL, "UPDATE " + TABLE + " SET n = n + 1 WHERE id = 1", false);
            case "mariadb-select1" -> jdbc(Servers.Db.MARIADB, "SELECT 1", true);
            case "mariadb-update" -> jdbc(Servers.Db.MARIADB, "UPDATE " + TABLE + " SET n = n + 1 WHERE id = 1", false);
            case "sqlite-select1" -> jdbc(Servers.Db.SQLITE, "SELECT 1", true);
            case "sqlite-update" -> jdbc(Servers.Db.SQLITE, "UPDATE " + TABLE + " SET n = n + 1 WHERE id = 1", false);
            case "redis-ping" -> redis();
            case "zookeeper-exists" -> zk(false);
            case "zookeeper-setdata" -> zk(true);
            default -> throw new IllegalArgumentException("no floor '" + id + "'");
        };
    }

    /** Creates the one-row table the durable-write floors update. */
    static void prepare(Servers.Db db) throws Exception {
        try (Connection c = Servers.connect(db, "prepare"); var st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (id int PRIMARY KEY, n bigint NOT NULL)");
            st.execute(switch (db) {
                case POSTGRESQL -> "INSERT INTO " + TABLE + " VALUES (1, 0) ON CONFLICT DO NOTHING";
                case MARIADB -> "INSERT IGNORE INTO " + TABLE + " VALUES (1, 0)";
                case SQLITE -> "INSERT OR IGNORE INTO " + TABLE + " VALUES (1, 0)";
            });
        }
    }

    private static Op jdbc(Servers.Db db, String sql, boolean query) throws Exception {
        Connection c = Servers.connect(db, "w0");
        PreparedStatement ps = c.prepareStatement(sql);
        return new Op() {
            @Override
            public void run() throws Exception {
                if (query) {
                    ps.executeQuery().close();
                } else {
                    ps.executeUpdate();
                }
            }

            @Override
            public void close() throws Exception {
                ps.close();
                c.close();
            }
        };
    }

    private static Op redis() {
        RedisClient client = RedisClient.create(Servers.REDIS_URI);
        StatefulRedisConnection<String, String> conn = client.connect();
        var sync = conn.sync();
        return new Op() {
            @Override
            public void run() {
                sync.ping();
            }

            @Override
            public void close() {
                conn.close();
                client.shutdown();
            }
        };
    }

    private static Op zk(boolean write) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(Servers.zk(), 30_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(30, TimeUnit.SECONDS)) {
            zk.close();
            throw new IllegalStateException("ZooKeeper at " + Servers.zk() + " did not connect");
        }
        String path = "/bench-floor";
        try {
            zk.create(path, new byte[8], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException ignored) {
            // made by an earlier run
        }
        byte[] data = new byte[8];
        return new Op() {
            @Override
            public void run() throws Exception {
                if (write) {
                    zk.setData(path, data, -1);
                } else {
                    zk.exists(path, false);
                }
            }

            @Override
            public void close() throws Exception {
                zk.close();
            }
        };
    }
}
