package dev.baton.faultproxy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The proxy in front of a local echo server, over real sockets. */
class FaultProxyTest {
    private static final int TIMEOUT_MS = 10_000;

    private ServerSocket echo;
    /** The remote port of every connection the echo server accepted, in order. */
    private final BlockingQueue<Integer> accepted = new LinkedBlockingQueue<>();
    /** Every chunk of bytes the echo server received. */
    private final BlockingQueue<String> received = new LinkedBlockingQueue<>();
    private FaultProxy proxy;

    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    accepted.add(s.getPort());
                    Thread c = new Thread(() -> serve(s), "echo-conn");
                    c.setDaemon(true);
                    c.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "echo");
        t.setDaemon(true);
        t.start();
        proxy = new FaultProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort()));
    }

    /** Echoes what it reads; a line "bye" makes it close the connection. */
    private void serve(Socket s) {
        byte[] buf = new byte[1024];
        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                String text = new String(buf, 0, n, StandardCharsets.UTF_8);
                received.add(text);
                if (text.equals("bye")) {
                    return;
                }
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException ignored) {
            // the test ended the connection
        }
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        s.setSoTimeout(TIMEOUT_MS);
        return s;
    }

    private static void send(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
    }

    private static String read(Socket s, int length) throws IOException {
        byte[] buf = s.getInputStream().readNBytes(length);
        return new String(buf, StandardCharsets.UTF_8);
    }

    private String nextReceived() throws InterruptedException {
        return received.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    @Test
    void forwardsBothWaysWhileNormal() throws Exception {
        try (Socket s = connect()) {
            send(s, "hello");
            assertThat(read(s, 5)).isEqualTo("hello");
            assertThat(proxy.mode()).isEqualTo(FaultProxy.Mode.NORMAL);
        }
    }

    @Test
    void aConnectionTheServerEndsEndsForTheClientWithEndOfStream() throws Exception {
        try (Socket s = connect()) {
            send(s, "bye");
            assertThat(nextReceived()).isEqualTo("bye");
            assertThat(s.getInputStream().read()).isEqualTo(-1);
        }
    }

    @Test
    void aBlackholeHoldsBytesUntilHealedAndDoesNotConnectNewClients() throws Exception {
        try (Socket s = connect()) {
            send(s, "one");
            assertThat(read(s, 3)).isEqualTo("one");
            proxy.fault(FaultProxy.Mode.BLACKHOLE);
            send(s, "two");
            try (Socket fresh = connect()) {
                // neither the held bytes nor the new client reach the server while black-holed
                s.setSoTimeout(300);
                assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
                assertThat(received).containsExactly("one");
                assertThat(accepted).hasSize(1);
                s.setSoTimeout(TIMEOUT_MS);
                proxy.heal();
                assertThat(read(s, 3)).isEqualTo("two");
                send(fresh, "three");
                assertThat(read(fresh, 5)).isEqualTo("three");
                assertThat(accepted).hasSize(2);
            }
        }
    }

    @Test
    void aResetResetsOpenConnectionsAndNewOnes() throws Exception {
        try (Socket s = connect()) {
            send(s, "one");
            assertThat(read(s, 3)).isEqualTo("one");
            proxy.fault(FaultProxy.Mode.RESET);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketException.class)
                    .hasMessageContaining("reset");
            try (Socket fresh = connect()) {
                assertThatThrownBy(() -> fresh.getInputStream().read()).isInstanceOf(SocketException.class)
                        .hasMessageContaining("reset");
            }
            proxy.heal();
            try (Socket healed = connect()) {
                send(healed, "two");
                assertThat(read(healed, 3)).isEqualTo("two");
            }
        }
    }

    @Test
    void droppedResponsesReachTheServerButNotTheClientAndTheConnectionIsResetWhenHealed() throws Exception {
        try (Socket s = connect()) {
            send(s, "one");
            assertThat(read(s, 3)).isEqualTo("one");
            assertThat(nextReceived()).isEqualTo("one");
            proxy.fault(FaultProxy.Mode.DROP_RESPONSES);
            send(s, "two");
            assertThat(nextReceived()).isEqualTo("two");
            s.setSoTimeout(300);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            s.setSoTimeout(TIMEOUT_MS);
            proxy.heal();
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketException.class)
                    .hasMessageContaining("reset");
        }
    }

    @Test
    void logsEachUpstreamConnectionWithItsPortAndTag() throws Exception {
        long before = System.nanoTime();
        proxy.tag(7);
        try (Socket s = connect()) {
            send(s, "x");
            assertThat(read(s, 1)).isEqualTo("x");
            int port = accepted.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            assertThat(proxy.upstreamPorts()).containsExactly(port);
            FaultProxy.Upstream u = proxy.upstreamAt(port, System.nanoTime()).orElseThrow();
            assertThat(u.port()).isEqualTo(port);
            assertThat(u.tag()).isEqualTo(7);
            assertThat(u.openedNanos() - before).isPositive();
            assertThat(proxy.upstreamAt(port, before)).isEmpty();
            assertThat(proxy.upstreamAt(port + 1, System.nanoTime())).isEmpty();
        }
    }
}
