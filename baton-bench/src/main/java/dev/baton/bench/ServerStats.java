package dev.baton.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

import java.sql.Connection;
import java.sql.ResultSet;

/**
 * Server-wide counters read before and after a run. They count every client of the server, so they are
 * approximate when something else (another build's tests) uses the server at the same time.
 */
final class ServerStats {
    private ServerStats() {
    }

    /** WAL/log fsyncs so far (PostgreSQL pg_stat_wal.wal_sync, MariaDB Innodb_data_fsyncs), or -1. */
    static long fsyncs(String server) {
        try {
            return switch (server) {
                case "postgresql" -> queryLong(Servers.Db.POSTGRESQL, "SELECT wal_sync FROM pg_stat_wal");
                case "mariadb" -> queryLong(Servers.Db.MARIADB,
                        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_DATA_FSYNCS'");
                default -> -1;
            };
        } catch (Exception e) {
            return -1;
        }
    }

    static long queryLong(Servers.Db db, String sql) throws Exception {
        try (Connection c = Servers.connect(db, "bench-stats"); var st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static long queryLong(Servers.Db db, String sql, String arg) throws Exception {
        try (Connection c = Servers.connect(db, "bench-stats"); var ps = c.prepareStatement(sql)) {
            ps.setString(1, arg);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Redis: total commands processed so far, and clients connected with the given name. */
    static long[] redis(String clientName) {
        RedisClient client = RedisClient.create(Servers.REDIS_URI);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            String info = c.sync().info("stats");
            long commands = -1;
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("total_commands_processed:")) {
                    commands = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
            long named = 0;
            if (clientName != null) {
                for (String line : c.sync().clientList().split("\r?\n")) {
                    // Baton names its connections baton:<client id>, the client id starting with its prefix
                    if (line.contains(" name=" + clientName + " ") || line.contains(" name=baton:" + clientName + "/")) {
                        named++;
                    }
                }
            }
            return new long[]{commands, named};
        } finally {
            client.shutdown();
        }
    }

    /**
     * Lua script calls the server has run ({@code EVAL}, {@code EVALSHA} and their read-only forms, from
     * {@code INFO commandstats}), server-wide: a renewal is one script call however many keys it touches, while
     * {@code total_commands_processed} also counts each command a script runs.
     */
    static long redisScriptCalls() {
        RedisClient client = RedisClient.create(Servers.REDIS_URI);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            long calls = 0;
            for (String line : c.sync().info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_eval")) {
                    int at = line.indexOf("calls=");
                    calls += Long.parseLong(line.substring(at + 6, line.indexOf(',', at)));
                }
            }
            return calls;
        } finally {
            client.shutdown();
        }
    }

    static String version(String server) {
        try {
            return switch (server) {
                case "postgresql" -> stringQuery(Servers.Db.POSTGRESQL, "SHOW server_version");
                case "mariadb" -> stringQuery(Servers.Db.MARIADB, "SELECT VERSION()");
                case "sqlite" -> stringQuery(Servers.Db.SQLITE, "SELECT sqlite_version()");
                case "redis" -> {
                    RedisClient client = RedisClient.create(Servers.REDIS_URI);
                    try (StatefulRedisConnection<String, String> c = client.connect()) {
                        String v = "?";
                        for (String line : c.sync().info("server").split("\r?\n")) {
                            if (line.startsWith("redis_version:")) {
                                v = line.substring(14).trim();
                            }
                        }
                        yield v;
                    } finally {
                        client.shutdown();
                    }
                }
                case "zookeeper" -> zookeeperVersion() + " (its own process, scripts/start-servers.sh)";
                default -> "?";
            };
        } catch (Exception e) {
            return "unreachable: " + e.getMessage();
        }
    }

    /** Durability settings that decide what a "durable write" costs. */
    static String durability(String server) {
        try {
            return switch (server) {
                case "postgresql" -> "fsync=" + stringQuery(Servers.Db.POSTGRESQL, "SHOW fsync") + ", synchronous_commit="
                        + stringQuery(Servers.Db.POSTGRESQL, "SHOW synchronous_commit");
                case "mariadb" -> "innodb_flush_log_at_trx_commit="
                        + stringQuery(Servers.Db.MARIADB, "SELECT @@innodb_flush_log_at_trx_commit") + ", log_bin="
                        + stringQuery(Servers.Db.MARIADB, "SELECT @@log_bin");
                case "sqlite" -> {
                    String sync = stringQuery(Servers.Db.SQLITE, "PRAGMA synchronous");
                    yield "WAL, synchronous=" + sync + (sync.equals("2") ? " (FULL: WAL fsync per commit)"
                            : sync.equals("1") ? " (NORMAL: no fsync per commit in WAL mode)" : "");
                }
                case "redis" -> "no persistence as started by scripts/start-servers.sh (--save '' --appendonly no)";
                case "zookeeper" -> "txn log fsync per write (ZooKeeper default forceSync)";
                default -> "";
            };
        } catch (Exception e) {
            return "?";
        }
    }

    static String stringQuery(Servers.Db db, String sql) throws Exception {
        try (Connection c = Servers.connect(db, "bench-stats"); var st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** The server's version from its {@code srvr} four-letter command ("Zookeeper version: 3.9.5-…"). */
    private static String zookeeperVersion() throws java.io.IOException {
        for (String line : fourLetters("srvr").split("\n")) {
            if (line.startsWith("Zookeeper version: ")) {
                return line.substring("Zookeeper version: ".length()).split("[-,]")[0];
            }
        }
        return "?";
    }

    /** A server-wide figure from ZooKeeper's {@code mntr} ({@code zk_packets_received}, ...), or -1. */
    static long zookeeper(String key) {
        try {
            for (String line : fourLetters("mntr").split("\n")) {
                String[] kv = line.split("\t");
                if (kv.length == 2 && kv[0].equals(key)) {
                    return Long.parseLong(kv[1].strip());
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            System.err.println("zookeeper mntr: " + e);
        }
        return -1;
    }

    private static String fourLetters(String command) throws java.io.IOException {
        String[] hostPort = Servers.zk().split(",")[0].split(":");
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])), 5000);
            socket.setSoTimeout(5000);
            socket.getOutputStream().write(command.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
        }
    }
}
