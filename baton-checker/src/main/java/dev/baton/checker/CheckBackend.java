package dev.baton.checker;

import dev.baton.LockClient;
import dev.baton.LockInfo;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The controller's view of a backend under check: a client of its own (to sample holders and to probe at
 * the end), where the server listens (so each worker can be given a fault proxy), and the server's
 * sessions (to kill a holder's and to find orphans). Sessions are identified by the client-side TCP port
 * of their connection: every worker connects through its own proxy, so the controller knows which ports
 * belong to which worker without asking the worker.
 */
public interface CheckBackend extends AutoCloseable {

    /** A description for the report, such as {@code jdbc-lease/postgresql (table baton_check)}. */
    String description();

    /** A short name of the backend for the summary table, such as {@code postgresql}. */
    String shortName();

    /** The controller's client: direct to the server, never faulted. */
    LockClient client();

    /**
     * A lock as the server shows it.
     *
     * @param info       as {@link LockClient#list()} shows it
     * @param clientPort the client-side TCP port of the server session that holds it, when the holder is a
     *                   server session rather than a named owner (advisory and named locks); -1 otherwise
     */
    record Seen(LockInfo info, int clientPort) {
    }

    /**
     * The locks as the server shows them now, in one look. The default is {@link #client()}'s
     * {@link LockClient#list()}, whose holder ids name the owner; a backend whose holders are server sessions
     * returns each held lock with its session's client port, so the controller can tell which worker's proxy
     * (and so which worker process) holds it.
     */
    default List<Seen> look() {
        List<Seen> out = new ArrayList<>();
        for (LockInfo info : client().list()) {
            out.add(new Seen(info, -1));
        }
        return out;
    }

    /** Where the server listens, if workers reach it over TCP (so a proxy can be put in between). */
    Optional<InetSocketAddress> serverAddress();

    /** The URL a worker uses to reach the server through a proxy listening on the given local port. */
    String urlThroughProxy(int proxyPort);

    /** Why the server's sessions cannot be killed, or empty if {@link #killSessions} works. */
    Optional<String> sessionKillUnsupported();

    /**
     * Kills every server session whose client-side port (as the server sees it: the proxy's upstream port)
     * is in the set.
     *
     * @return how many sessions were killed
     */
    int killSessions(Set<Integer> clientPorts);

    /**
     * A mark of "now" in the server's order of sessions: every session opened later sorts after it (PostgreSQL: the
     * server's clock against {@code backend_start}; MariaDB/MySQL: connection ids only grow).
     */
    long sessionMark();

    /**
     * How many server sessions exist now from these client-side ports that were opened before {@code mark}. A later
     * session cannot be a stopped worker's: it is a new connection (the checker's own, or another program's) that the
     * kernel gave a port a worker's connection had used.
     */
    int countSessions(Set<Integer> clientPorts, long mark);

    /** Closes the controller's client and connections. */
    @Override
    void close();
}
