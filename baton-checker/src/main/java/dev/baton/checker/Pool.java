package dev.baton.checker;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How the workers reach the database ({@code --pool}): the pools users run Baton on, each of which broke a
 * promise once that the checker's own small default pool never showed.
 */
public enum Pool {
    /** The checker's own HikariCP pool: auto-commit on, a few connections to spare. */
    DEFAULT("default"),
    /** HikariCP whose connections default to {@code autoCommit=false} (common with Spring settings). */
    AUTOCOMMIT_OFF("autocommit-off"),
    /** HikariCP with exactly the connections the strategy documents as its need ({@link #SMALL_SIZE}). */
    SMALL("small"),
    /** Through PgBouncer in transaction mode ({@link #PGBOUNCER_ADDRESS}), PostgreSQL only. */
    PGBOUNCER("pgbouncer");

    /**
     * The size of the {@code small} pool: what docs/OPERATIONS.md (Sizing) says each strategy needs per client — the
     * lease strategy one connection for its statements plus one PostgreSQL {@code LISTEN} connection, the
     * session strategy its "two dedicated connections", {@code runOnce} one per call plus the client's
     * {@code LISTEN} connection.
     */
    public static final int SMALL_SIZE = 2;
    /** The local PgBouncer that {@code scripts/start-servers.sh} starts, in transaction mode. */
    public static final InetSocketAddress PGBOUNCER_ADDRESS = new InetSocketAddress("127.0.0.1", 6432);

    private final String id;

    Pool(String id) {
        this.id = id;
    }

    /** The name used with {@code --pool}. */
    public String id() {
        return id;
    }

    /** @throws IllegalArgumentException naming the known pools */
    public static Pool byId(String id) {
        for (Pool p : values()) {
            if (p.id.equals(id.toLowerCase(Locale.ROOT))) {
                return p;
            }
        }
        throw new IllegalArgumentException("--pool: unknown pool '" + id + "'; use "
                + Arrays.stream(values()).map(Pool::id).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return id;
    }
}
