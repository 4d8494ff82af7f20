package dev.baton.checker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
 * One worker's network path to the server: a TCP proxy on 127.0.0.1 that can cut it in three ways.
 * <ul>
 *   <li>{@link Mode#BLACKHOLE}: nothing is forwarded either way and new connections are accepted but not
 *       connected onward; bytes already read wait in the proxy and flow when healed (a stalled path whose
 *       TCP retransmissions succeed later). Calls hang until their socket timeout.</li>
 *   <li>{@link Mode#RESET}: every open connection is reset (RST) and new connections are reset at once.</li>
 *   <li>{@link Mode#DROP_RESPONSES}: requests reach the server, replies are thrown away. The client cannot
 *       know whether a statement took effect: its outcomes become ambiguous. Connections whose replies were
 *       dropped are out of step, so they are reset when the fault heals.</li>
 * </ul>
 * The controller knows the proxy's upstream ports, which is how it finds the worker's server sessions; the
 * proxy also keeps a log of every upstream connection it opened (port, the worker generation it served, when
 * it opened and closed), so a session the server names by its client port can be traced to a worker process.
 */
final class FaultProxy implements AutoCloseable {
    /** The state of the path. */
    enum Mode { NORMAL, BLACKHOLE, RESET, DROP_RESPONSES }

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final List<Upstream> log = new CopyOnWriteArrayList<>();
    private volatile int tag;
    private final Object gate = new Object();
    private volatile Mode mode = Mode.NORMAL;
    private volatile boolean closed;

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

    /** One upstream connection: its client-side port, the tag of its link, when it opened. */
    record Upstream(int port, int tag, long opened) {
    }

    FaultProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "proxy-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /**
     * Tags the connections accepted from now on (the controller sets the worker's generation before it
     * starts that generation: the only process that can connect afterwards).
     */
    void tag(int t) {
        tag = t;
    }

    /**
     * The upstream connection that had this client-side port at the given time: the latest one opened by
     * then (its server session may outlive the proxy's side of it by a moment), or empty if none.
     */
    Optional<Upstream> upstreamAt(int port, long nanos) {
        Upstream best = null;
        for (Upstream u : log) {
            if (u.port() == port && u.opened() - nanos <= 0 && (best == null || u.opened() - best.opened() > 0)) {
                best = u;
            }
        }
        return Optional.ofNullable(best);
    }

    Mode mode() {
        return mode;
    }

    /** Cuts the path in the given way until {@link #heal()}. */
    void fault(Mode m) {
        mode = m;
        if (m == Mode.RESET) {
            links.forEach(this::reset);
        }
    }

    /** Restores the path. Connections that lost replies are reset; black-holed bytes flow on. */
    void heal() {
        Mode was = mode;
        mode = Mode.NORMAL;
        if (was == Mode.DROP_RESPONSES) {
            links.stream().filter(l -> l.droppedReplies).forEach(this::reset);
        }
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    /** The client-side ports of the proxy's open connections to the server, as the server sees them. */
    Set<Integer> upstreamPorts() {
        Set<Integer> ports = new TreeSet<>();
        for (Link l : links) {
            Socket u = l.upstream;
            if (u != null && !u.isClosed()) {
                ports.add(u.getLocalPort());
            }
        }
        return ports;
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
                Thread t = new Thread(() -> connect(link), "proxy-conn");
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
            upstream.connect(target, 5000);
            // logged before any byte flows, so no statement can run on the session before its port is known
            log.add(new Upstream(upstream.getLocalPort(), link.tag, System.nanoTime()));
            link.upstream = upstream;
            link.client.setTcpNoDelay(true);
            pump(link, link.client, upstream, false);
            pump(link, upstream, link.client, true);
        } catch (IOException | InterruptedException e) {
            reset(link);
        }
    }

    private void pump(Link link, Socket from, Socket to, boolean replies) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitNotBlackholed();
                    if (replies && mode == Mode.DROP_RESPONSES) {
                        link.droppedReplies = true;
                        continue;
                    }
                    if (mode == Mode.RESET) {
                        break;
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the connection ended
            } finally {
                reset(link);
            }
        }, replies ? "proxy-down" : "proxy-up");
        t.setDaemon(true);
        t.start();
    }

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
        try {
            s.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

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
