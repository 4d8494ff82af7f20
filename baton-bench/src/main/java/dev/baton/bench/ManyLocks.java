package dev.baton.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * W3: one client holding N locks at once. For each N: the server connections the client uses while it
 * holds them (counted on the server), the renewal statements it sends per renewal interval (counted in the
 * client's pool wrapper on Baton's renewal thread; Redis: server-wide commands processed), client heap per
 * held lock (used heap after full GCs, before and after), and the time to acquire them all one by one.
 */
final class ManyLocks {
    /** Lease time for W3, so that a renewal interval (a third of it) passes quickly. */
    static final Duration LEASE = Duration.ofSeconds(3);
    static final Duration RENEW_INTERVAL = LEASE.dividedBy(3);

    record Result(String subject, int locks, long connections, double renewalsPerInterval, double heapBytesPerLock,
                  double acquireAllMillis, String note, String error) {
    }

    private ManyLocks() {
    }

    static Result run(Subject subject, int n, int intervals) {
        String name = "w3-" + subject.id() + "-" + n;
        Subject.Held[] held = new Subject.Held[n];
        String[] names = new String[n];
        // per subject, as W1 and W2 name theirs: one name is one lock across strategies sharing a table, so the
        // session subject may not take names the lease subject used (it would be refused, and rightly)
        String prefix = "w3-" + subject.id() + "-";
        for (int i = 0; i < n; i++) {
            names[i] = prefix + i;
        }
        Subject.Client client = null;
        try {
            client = subject.open(name, LEASE);
            client.acquire(prefix + "warm").release();
            long heap0 = usedHeapAfterGc();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                held[i] = client.acquire(names[i]);
            }
            double acquireMillis = (System.nanoTime() - t0) / 1e6;
            long heap1 = usedHeapAfterGc();
            // renewals: count over whole intervals while holding, nothing else running in this client
            long r0 = renewals(subject, client);
            Thread.sleep(RENEW_INTERVAL.toMillis() * intervals);
            long r1 = renewals(subject, client);
            long connections = connections(subject, name);
            int lost = 0;
            for (Subject.Held h : held) {
                if (!h.valid()) {
                    lost++;
                }
            }
            double renewals = r0 < 0 ? -1 : (double) (r1 - r0) / intervals;
            for (int i = n - 1; i >= 0; i--) {
                held[i].release();
                held[i] = null;
            }
            String note = switch (subject.server()) {
                case "redis" -> "renewals: Lua script calls (EVAL/EVALSHA), server-wide";
                case "zookeeper" -> "renewals: all requests and pings the server received; connections: all the"
                        + " server's, server-wide (nothing else connects meanwhile)";
                case "sqlite" -> "connections: a file, no server";
                default -> "";
            };
            if (lost > 0) {
                note = (note.isEmpty() ? "" : note + "; ") + "**" + lost + " of " + n
                        + " leases LOST while held (renewal failed)**";
                BenchMain.log("  " + lost + " of " + n + " leases of " + subject.id() + " were lost while held");
            }
            return new Result(subject.id(), n, connections, renewals, (double) (heap1 - heap0) / n, acquireMillis,
                    note, null);
        } catch (Throwable e) {
            e.printStackTrace();
            return new Result(subject.id(), n, -1, -1, -1, -1, "", e.getClass().getSimpleName() + ": " + e.getMessage());
        } finally {
            if (client != null) {
                try {
                    client.close();
                } catch (Exception e) {
                    System.err.println("closing " + name + ": " + e);
                }
            }
        }
    }

    private static long renewals(Subject subject, Subject.Client client) {
        if (client.renewalStatements() >= 0) {
            return client.renewalStatements();
        }
        if (subject.server().equals("redis")) {
            return ServerStats.redisScriptCalls();
        }
        if (subject.server().equals("zookeeper")) {
            return ServerStats.zookeeper("zk_packets_received");
        }
        return -1;
    }

    private static long connections(Subject subject, String name) throws Exception {
        return switch (subject.server()) {
            case "postgresql" -> ServerStats.queryLong(Servers.Db.POSTGRESQL,
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", name);
            case "mariadb" -> ServerStats.queryLong(Servers.Db.MARIADB,
                    "SELECT count(*) FROM information_schema.PROCESSLIST WHERE USER = ?", Servers.MARIADB_W3_USER);
            case "redis" -> ServerStats.redis(name)[1];
            case "zookeeper" -> ServerStats.zookeeper("zk_num_alive_connections");
            default -> -1;
        };
    }

    static long usedHeapAfterGc() throws InterruptedException {
        var mem = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, mem.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
