package dev.baton.zookeeper;

import dev.baton.LockBackendException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * How one backend talks to ZooKeeper: its Curator client, the thread pool that runs the blocking calls so that each
 * caller waits at most the connection timeout ({@link #bounded}), the session and connection as the client sees them
 * now, and the backend exception a failed call becomes. Reads that every part of the backend makes (a line's
 * children, a node's owner) live here too.
 */
final class Calls {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

    private final CuratorFramework client;
    private final String description;
    /**
     * Runs the blocking Curator calls of acquire, release, check and withdrawal, so their caller waits at most the
     * connection timeout for an answer (Curator's own retries wait that long for a connection per retry).
     */
    private final ExecutorService calls = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "baton-zookeeper-call");
        t.setDaemon(true);
        return t;
    });

    Calls(CuratorFramework client, String description) {
        this.client = client;
        this.description = description;
    }

    CuratorFramework client() {
        return client;
    }

    String description() {
        return description;
    }

    /** The pool the bounded calls run on (closing withdraws every place on it at once). */
    ExecutorService pool() {
        return calls;
    }

    /** Stops the pool; a call running goes on to its end in the background. */
    void shutdown() {
        calls.shutdown();
    }

    long connectionTimeoutMs() {
        return client.getZookeeperClient().getConnectionTimeoutMs();
    }

    long currentSession() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            throw failed("reading the session id", e);
        }
    }

    boolean connected() {
        return client.getZookeeperClient().isConnected();
    }

    void requireConnected(String what) {
        if (!connected()) {
            throw new LockBackendException(description, what + " refused: not connected to ZooKeeper (the session"
                    + " is suspended until the connection returns, or expires)", null);
        }
    }

    /** A backend exception for a failed call; an interrupted call keeps the thread's interrupt flag. */
    LockBackendException failed(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return new LockBackendException(description, what + " failed: " + e, e);
    }

    /** A blocking Curator call. */
    interface Call<T> {
        T run() throws Exception;
    }

    /**
     * Runs {@code call} and waits for its answer at most the Curator client's connection timeout: the bound of every
     * request, whatever the network does. Without an answer by then it throws, and the call goes on in the
     * background; {@code late} (if any) gets a result that comes after. An interrupted wait abandons it the same way.
     */
    <T> T bounded(String what, Call<T> call, Consumer<T> late) throws Exception {
        CompletableFuture<T> answer = new CompletableFuture<>();
        calls.execute(() -> {
            try {
                T result = call.run();
                if (!answer.complete(result) && late != null && result != null) {
                    late.accept(result);
                }
            } catch (Throwable e) {
                answer.completeExceptionally(e);
            }
        });
        long bound = connectionTimeoutMs();
        try {
            return answer.get(bound, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } catch (TimeoutException | InterruptedException e) {
            if (!answer.completeExceptionally(e)) {
                return answer.join(); // answered just now
            }
            if (e instanceof InterruptedException) {
                throw e;
            }
            throw new LockBackendException(description, what + ": no answer from ZooKeeper within " + bound
                    + " ms (the connection timeout); " + (connected() ? "the connection looks open, the network may"
                    + " be cut" : "not connected"), null);
        }
    }

    List<String> children(String parent) throws Exception {
        return children(parent, new Stat());
    }

    /** The parent's children, and its stat in {@code stat} (left as is if the parent does not exist). */
    List<String> children(String parent, Stat stat) throws Exception {
        try {
            return bounded("reading the line of " + parent, () -> client.getChildren().storingStatIn(stat)
                    .forPath(parent), null);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /**
     * Deletes a node, waiting for the answer at most the connection timeout; false if it could not be deleted now (a
     * node of this client then goes when the connection returns, or with its session: the caller's to arrange).
     */
    boolean deleteQuietly(String path) {
        boolean interrupted = Thread.interrupted();
        try {
            bounded("deleting " + path, () -> client.delete().forPath(path), null);
            return true;
        } catch (KeeperException.NoNodeException e) {
            return true; // already gone
        } catch (Exception e) {
            log.debug("could not delete {} now; it goes when the connection returns, or with its session", path, e);
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The owner a member node's data names. */
    static String owner(byte[] data) {
        return data == null ? null : new String(data, StandardCharsets.UTF_8);
    }
}
