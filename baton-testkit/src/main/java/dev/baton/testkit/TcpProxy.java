package dev.baton.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on the loopback interface between one client and a real server, so a test can cut the
 * client's network path without touching the server or other clients. {@link #blackhole(boolean)} stops
 * forwarding in both directions (bytes wait in the proxy, new connections are accepted but not connected
 * onward), which is what a partition looks like to a client: calls hang until their socket timeout.
 */
public final class TcpProxy implements AutoCloseable {
    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private volatile boolean blackholed;
    private volatile boolean closed;

    public TcpProxy(String targetHost, int targetPort) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException("cannot open a proxy port", e);
        }
        Thread t = new Thread(this::acceptLoop, "tcp-proxy-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    /** The local port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** Stops (true) or resumes (false) all forwarding. */
    public void blackhole(boolean on) {
        blackholed = on;
        if (!on) {
            synchronized (gate) {
                gate.notifyAll();
            }
        }
    }

    private void awaitOpen() throws InterruptedException {
        synchronized (gate) {
            while (blackholed && !closed) {
                gate.wait(50);
            }
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Thread t = new Thread(() -> connect(client), "tcp-proxy-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void connect(Socket client) {
        try {
            sockets.add(client);
            awaitOpen();
            Socket upstream = new Socket(targetHost, targetPort);
            sockets.add(upstream);
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            pump(client, upstream);
            pump(upstream, client);
        } catch (IOException | InterruptedException e) {
            closeQuietly(client);
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitOpen();
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // connection ended
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void closeQuietly(Socket s) {
        sockets.remove(s);
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() {
        closed = true;
        blackhole(false);
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        sockets.forEach(this::closeQuietly);
    }
}
