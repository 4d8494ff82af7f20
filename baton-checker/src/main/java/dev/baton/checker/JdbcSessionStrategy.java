package dev.baton.checker;

import dev.baton.jdbc.JdbcLocks;
import dev.baton.jdbc.Strategy;
import dev.baton.spi.AbstractClientBuilder;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * The JDBC session strategy ({@link Strategy#SESSION}): PostgreSQL advisory locks, MariaDB/MySQL
 * {@code GET_LOCK}, held by two dedicated server sessions per client. {@code --strategy session}.
 *
 * <p>Who holds a lock: the server shows a session, not an owner id (PostgreSQL {@code application_name (pid
 * N)}, MariaDB {@code connection N}), and a session belongs to a process, not to one attempt. The controller
 * lists the held locks together with each holding session's client port, in one statement; the port is the
 * upstream side of exactly one worker's fault proxy, and the proxy logged which generation of the worker it
 * served, so the holder is named {@code w<index>.<gen>/session …}. That is the identity the checker already
 * trusts to kill a worker's sessions and to count orphans, it is the same on both servers, and it does not
 * depend on what the library under test writes into {@code application_name}. The analysis then finds the
 * attempt from the process's own history (a worker runs one attempt at a time).
 *
 * <p>When a hand-over is owed (check (c)), each within {@link #handOverBound} — the waiter's wake-up: a
 * waiter blocked on the server is granted at once, a polling one within its longest poll — plus the
 * checker's margin:
 * <ul>
 *   <li>{@code kill}, {@code session-kill}, {@code partition reset}: from the fault's start. The server
 *       ends the session when its connection closes (a dead process's sockets are closed by its kernel, the
 *       proxy passes the close on) or when it is killed, and frees its locks at once: no lease to wait
 *       out.</li>
 *   <li>{@code pause}: from its end. A paused holder's session is alive, so it keeps its lock for the whole
 *       pause: that is what a session lock promises, not a liveness failure. On resuming, its lease is past
 *       its deadline (the pause is 3× the lease), so it hears the lease was lost and releases at once.</li>
 *   <li>{@code partition blackhole} and {@code drop-responses}: from its end. The workers' sessions ask the
 *       server for TCP keepalive 1 s/1 s/2 ({@link JdbcLocks.Builder#sessionKeepalive}), which frees a
 *       vanished client's locks in about 3 s on a real network; but every worker reaches the server through
 *       the checker's proxy on this host, whose kernel answers the server's keepalive probes, so a cut-off
 *       holder's session (and its lock) lives until the path heals: then the holder's stalled statement
 *       returns or its connection is reset, and it releases the lease it has meanwhile heard was lost.</li>
 * </ul>
 *
 * <p>SQLite has no server sessions and so no session locks: {@code --strategy session} refuses it.
 */
public class JdbcSessionStrategy extends JdbcLeaseStrategy {
    /** Server-side TCP keepalive of the workers' sessions: idle, interval, count. */
    static final Duration KEEPALIVE_IDLE = Duration.ofSeconds(1);
    static final Duration KEEPALIVE_INTERVAL = Duration.ofSeconds(1);
    static final int KEEPALIVE_COUNT = 2;

    @Override
    public String name() {
        return "session";
    }

    @Override
    public void validate(String url) {
        String lower = url.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:sqlite:")) {
            throw new IllegalArgumentException("--strategy session: '" + url + "' is SQLite, which has no server"
                    + " sessions and so no session locks (PostgreSQL advisory locks, MariaDB/MySQL GET_LOCK);"
                    + " check SQLite with --strategy lease");
        }
        if (!lower.startsWith("jdbc:postgresql:") && !lower.startsWith("jdbc:mariadb:")
                && !lower.startsWith("jdbc:mysql:")) {
            throw new IllegalArgumentException("--url: strategy 'session' runs on jdbc:postgresql:, jdbc:mariadb: or"
                    + " jdbc:mysql: URLs, not '" + url + "'");
        }
        super.validate(url);
    }

    @Override
    protected JdbcLocks.Builder configure(JdbcLocks.Builder builder) {
        return builder.strategy(Strategy.SESSION)
                .sessionKeepalive(KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT);
    }

    @Override
    public Optional<String> refuses(Pool pool) {
        return pool == Pool.PGBOUNCER ? Optional.of("a transaction-mode pooler hands each transaction to any server"
                + " connection, so it cannot keep a session lock; docs/SESSION.md says the session strategy refuses it")
                : Optional.empty();
    }

    @Override
    protected boolean holdersAreSessions() {
        return true;
    }

    @Override
    protected int workerPoolSize() {
        return 4; // two dedicated sessions, plus room for recording names and for replacing a discarded session
    }

    /** The waiter's wake-up: at once when blocked on the server, else within its longest poll. */
    @Override
    public Duration handOverBound(Duration leaseTime) {
        return AbstractClientBuilder.DEFAULT_MAX_POLL;
    }

    /** The server keeps the line (a waiter blocks in the server) and does not show it: no waiter to aim at. */
    @Override
    public java.util.Optional<Duration> deadPlaceBound(Duration leaseTime) {
        return java.util.Optional.empty();
    }

    @Override
    public HandOver handOver(String fault, String mode, Duration leaseTime) {
        Duration b = handOverBound(leaseTime);
        return switch (fault) {
            case "kill" -> HandOver.fromFaultStart(b, "the server ends a dead process's sessions and frees their"
                    + " locks at once");
            case "session-kill" -> HandOver.fromFaultStart(b, "the server frees a killed session's locks at once");
            case "pause" -> HandOver.fromFaultEnd(b, "a paused holder's live session keeps its lock; resumed,"
                    + " its lease is past its deadline and it releases");
            case "restart" -> HandOver.fromFaultEnd(b, "a restart ends every session and frees every lock; once"
                    + " the server is back, waiters reconnect and take it");
            case "partition" -> mode.equals("reset")
                    ? HandOver.fromFaultStart(b, "a reset connection ends its session at once")
                    : HandOver.fromFaultEnd(b, "the session lives while the path is cut (the proxy's host answers"
                    + " TCP keepalive); healed, the holder releases its lost lease");
            default -> HandOver.none("no fault");
        };
    }
}
