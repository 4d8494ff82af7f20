package dev.baton.faultproxy;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One client's network path to a real server: a TCP proxy on the loopback interface that can cut that path
 * without touching the server or other clients. While {@link Mode#NORMAL} it is transparent (a connection
 * either side ends is closed on the other side too). {@link #fault(Mode)} cuts the path in one of three ways
 * until {@link #heal()}:
 * <ul>
 *   <li>{@link Mode#BLACKHOLE}: nothing is forwarded either way and new connections are accepted but not
 *       connected onward; bytes already read wait in the proxy and flow when healed (a stalled path whose
 *       TCP retransmissions succeed later, which is what a partition looks like to a client: calls hang
 *       until their socket timeout).</li>
 *   <li>{@link Mode#RESET}: every open connection is reset (RST) and new connections are reset at once.</li>
 *   <li>{@link Mode#DROP_RESPONSES}: requests reach the server, replies are thrown away. The client cannot
 *       know whether a statement took effect: its outcomes become ambiguous. Connections whose replies were
 *       dropped are out of step, so they are reset when the fault heals.</li>
 * </ul>
 * The proxy also keeps a log of every upstream connection it opened (its client-side port, the {@link #tag}
 * in force when the client connected, when it opened), so a session a server names by its client port can be
 * traced to the client that opened it ({@link #upstreamAt}, {@link #upstreamPorts}).
 */
public final class FaultProxy implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FaultProxy.class);
    private static final int CONNECT_TIMEOUT_MS = 5000;

    /** The state of the path. */
    public enum Mode {
        /** Everything is forwarded. */
        NORMAL,
        /** Nothing is forwarded; bytes wait in the proxy and new connections are not connected onward. */
        BLACKHOLE,
        /** Every connection, open or new, is reset. */
        RESET,
        /** Requests are forwarded, replies are thrown away. */
        DROP_RESPONSES
    }

    /**
     * One upstream connection the proxy opened.
     *
     * @param port        its client-side (local) port, as the server sees it
     * @param tag         the {@link #tag} in force when the client connected
     * @param openedNanos when it opened, by {@link System#nanoTime()}
     */
    public record Upstream(int port, int tag, long openedNanos) {
    }

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final List<Upstream> log = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile int tag;
    private volatile Mode mode = Mode.NORMAL;
    private volatile boolean closed;

    /** One client connection and, once connected, its upstream connection. */
    private static final class Link {
        final Socket client;
        final int tag;
        volatile Socket upstream;
        volatile boolean droppedReplies;

        Link(Socket client, int tag) {
            this.client = client;
            this.tag = tag;
        }
    }

    /**
     * Opens a proxy to a server on a free loopback port.
     *
     * @throws UncheckedIOException if no port can be opened
     */
    public FaultProxy(InetSocketAddress target) {
        this.target = target;
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a proxy port", e);
        }
        Thread t = new Thread(this::acceptLoop, "fault-proxy-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    /** Opens a proxy to {@code host:port}; see {@link #FaultProxy(InetSocketAddress)}. */
    public FaultProxy(String host, int port) {
        this(new InetSocketAddress(host, port));
    }

    /** The local port clients connect to (on the loopback interface). */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * Tags the connections accepted from now on (a caller that knows which client will connect next, such as
     * the checker starting a worker's next generation, sets it first).
     */
    public void tag(int t) {
        tag = t;
    }

    /**
     * The upstream connection that had this client-side port at the given time: the latest one opened by
     * then (its server session may outlive the proxy's side of it by a moment), or empty if none.
     */
    public Optional<Upstream> upstreamAt(int port, long nanos) {
        Upstream best = null;
        for (Upstream u : log) {
            if (u.port() == port && u.openedNanos() - nanos <= 0
                    && (best == null || u.openedNanos() - best.openedNanos() > 0)) {
                best = u;
            }
        }
        return Optional.ofNullable(best);
    }

    /** The client-side ports of the proxy's open connections to the server, as the server sees them. */
    public Set<Integer> upstreamPorts() {
        Set<Integer> ports = new TreeSet<>();
        for (Link l : links) {
            Socket u = l.upstream;
            if (u != null && !u.isClosed()) {
                ports.add(u.getLocalPort());
            }
        }
        return ports;
    }

    /** The current state of the path. */
    public Mode mode() {
        return mode;
    }

    /** Cuts the path in the given way until {@link #heal()} ({@link Mode#NORMAL} is the same as healing). */
    public void fault(Mode m) {
        if (m == Mode.NORMAL) {
            heal();
            return;
        }
        mode = m;
        if (m == Mode.RESET) {
            links.forEach(this::reset);
        }
    }

    /** Restores the path. Connections that lost replies are reset; black-holed bytes flow on. */
    public void heal() {
        Mode was = mode;
        mode = Mode.NORMAL;
        if (was == Mode.DROP_RESPONSES) {
            links.stream().filter(l -> l.droppedReplies).forEach(this::reset);
        }
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    private void awaitNotBlackholed() throws InterruptedException {
        synchronized (gate) {
            while (mode == Mode.BLACKHOLE && !closed) {
                gate.wait(50);
            }
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Link link = new Link(client, tag);
                if (mode == Mode.RESET) {
                    reset(link);
                    continue;
                }
                links.add(link);
                Thread t = new Thread(() -> connect(link), "fault-proxy-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void connect(Link link) {
        try {
            awaitNotBlackholed();
            if (mode == Mode.RESET || closed) {
                reset(link);
                return;
            }
            Socket upstream = new Socket();
            upstream.setTcpNoDelay(true);
            upstream.connect(target, CONNECT_TIMEOUT_MS);
            // logged before any byte flows, so no statement can run on the session before its port is known
            log.add(new Upstream(upstream.getLocalPort(), link.tag, System.nanoTime()));
            link.upstream = upstream;
            link.client.setTcpNoDelay(true);
            pump(link, link.client, upstream, Direction.REQUESTS);
            pump(link, upstream, link.client, Direction.REPLIES);
        } catch (IOException e) {
            LOG.debug("proxy {} cannot connect to {}", port(), target, e);
            reset(link);
        } catch (InterruptedException e) {
            reset(link);
        }
    }

    private enum Direction { REQUESTS, REPLIES }

    private void pump(Link link, Socket from, Socket to, Direction direction) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            boolean cut = false;
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitNotBlackholed();
                    if (direction == Direction.REPLIES && mode == Mode.DROP_RESPONSES) {
                        link.droppedReplies = true;
                        continue;
                    }
                    if (mode == Mode.RESET) {
                        cut = true;
                        break;
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the connection ended, or was reset
            } finally {
                if (cut || mode == Mode.RESET || link.droppedReplies) {
                    reset(link);
                } else {
                    end(link);
                }
            }
        }, direction == Direction.REPLIES ? "fault-proxy-down" : "fault-proxy-up");
        t.setDaemon(true);
        t.start();
    }

    /** Ends a link the way the other side ended it: closed, so the peer sees the end of its stream. */
    private void end(Link link) {
        links.remove(link);
        closeQuietly(link.client);
        Socket u = link.upstream;
        if (u != null) {
            closeQuietly(u);
        }
    }

    /** Ends a link with a reset (RST) on both sides. */
    private void reset(Link link) {
        links.remove(link);
        abort(link.client);
        Socket u = link.upstream;
        if (u != null) {
            abort(u);
        }
    }

    private static void abort(Socket s) {
        try {
            if (!s.isClosed()) {
                s.setSoLinger(true, 0); // RST rather than FIN
            }
        } catch (IOException ignored) {
            // already gone
        }
        closeQuietly(s);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    /** Stops accepting and resets every open connection. */
    @Override
    public void close() {
        closed = true;
        mode = Mode.NORMAL;
        synchronized (gate) {
            gate.notifyAll();
        }
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        links.forEach(this::reset);
    }
}
