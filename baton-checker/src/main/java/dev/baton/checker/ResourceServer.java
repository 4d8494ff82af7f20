package dev.baton.checker;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The protected resource, in the controller and never faulted: per lock, a counter and the highest fencing
 * token seen. Workers speak one line per request over TCP on 127.0.0.1:
 * <pre>
 *   BEGIN|READ|END &lt;lock&gt; &lt;token&gt; &lt;attempt&gt;     → OK &lt;counter&gt; | STALE &lt;highest&gt;
 *   WRITE &lt;lock&gt; &lt;token&gt; &lt;attempt&gt; &lt;value&gt;       → OK &lt;value&gt;   | STALE &lt;highest&gt;
 *   RUN|DONE &lt;name&gt; 0 &lt;attempt&gt;                → OK 0   (a runOnce task starts, ends; never refused)
 * </pre>
 * Every access, accepted or rejected, is recorded in order with {@link System#nanoTime()}; the checks read
 * that record, not the fence's decisions.
 */
final class ResourceServer implements AutoCloseable {
    /** One access as the resource saw it. */
    record Access(long seq, long nanos, String lock, long token, String op, String attempt, boolean accepted,
                  long value, long highestBefore) {
    }

    private static final class LockState {
        long counter;
        long highest = Long.MIN_VALUE;
    }

    private final Fence fence;
    private final ServerSocket server;
    private final Map<String, LockState> locks = new ConcurrentHashMap<>();
    private final List<Access> log = new ArrayList<>();
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private long seq;
    private volatile boolean closed;

    ResourceServer(Fence fence) throws IOException {
        this.fence = fence;
        this.server = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "resource-accept");
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
    }

    Fence fence() {
        return fence;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket s = server.accept();
                sockets.add(s);
                Thread t = new Thread(() -> serve(s), "resource-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s; BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             BufferedWriter out = new BufferedWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8))) {
            s.setTcpNoDelay(true);
            String line;
            while ((line = in.readLine()) != null) {
                out.write(handle(line));
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            // the worker died or was stopped
        } finally {
            sockets.remove(s);
        }
    }

    String handle(String line) {
        String[] p = line.split(" ");
        if (p.length < 4) {
            return "ERR bad request";
        }
        String op = p[0].toLowerCase(java.util.Locale.ROOT);
        String lock = p[1];
        long token;
        try {
            token = Long.parseLong(p[2]);
        } catch (NumberFormatException e) {
            return "ERR bad token";
        }
        String attempt = p[3];
        long written = 0;
        if (op.equals("write")) {
            if (p.length < 5) {
                return "ERR write needs a value";
            }
            written = Long.parseLong(p[4]);
        } else if (op.equals("run") || op.equals("done")) {
            // a runOnce task starting or ending: not fenced (runOnce gives the task no token), only recorded
            synchronized (log) {
                log.add(new Access(seq++, System.nanoTime(), lock, token, op, attempt, true, 0, Long.MIN_VALUE));
            }
            return "OK 0";
        } else if (!op.equals("begin") && !op.equals("read") && !op.equals("end")) {
            return "ERR unknown op " + op;
        }
        LockState st = locks.computeIfAbsent(lock, k -> new LockState());
        synchronized (st) {
            long highest = st.highest;
            boolean ok = fence.admits(op, token, highest);
            long value;
            if (ok) {
                if (fence.raisesMark(op) && token > st.highest) {
                    st.highest = token;
                }
                if (op.equals("write")) {
                    st.counter = written;
                }
                value = st.counter;
            } else {
                value = highest;
            }
            synchronized (log) {
                log.add(new Access(seq++, System.nanoTime(), lock, token, op, attempt, ok,
                        ok ? value : written, highest));
            }
            return ok ? "OK " + value : "STALE " + highest;
        }
    }

    /** The counter of each lock now. */
    Map<String, Long> counters() {
        Map<String, Long> out = new java.util.TreeMap<>();
        locks.forEach((k, v) -> {
            synchronized (v) {
                out.put(k, v.counter);
            }
        });
        return out;
    }

    /** Every access so far, in the order the resource decided them. */
    List<Access> accesses() {
        synchronized (log) {
            return new ArrayList<>(log);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
