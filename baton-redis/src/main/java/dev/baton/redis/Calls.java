package dev.baton.redis;

import dev.baton.LockBackendException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How one backend talks to Redis on its command connection: the {@link Scripts}, run by their SHA and loaded again
 * with {@code EVAL} when the server's script cache lost them, never sent while the connection is down
 * ({@link #run}); the wait for a command, bounded by the command timeout and not ended by an interrupt
 * ({@link #await}); the few commands sent outside scripts ({@link #commands}); and the backend exception a failed
 * call becomes ({@link #failed}).
 */
final class Calls {
    private final StatefulRedisConnection<String, String> connection;
    private final Commands commands;
    private final String description;
    private final Duration commandTimeout;

    Calls(StatefulRedisConnection<String, String> connection, String description, Duration commandTimeout) {
        this.connection = connection;
        this.commands = new Commands(connection.async(), commandTimeout);
        this.description = description;
        this.commandTimeout = commandTimeout;
    }

    String description() {
        return description;
    }

    /** The commands sent outside scripts, each waited for at most the command timeout. */
    Commands commands() {
        return commands;
    }

    /** False while the connection is down (Lettuce reconnecting): lock commands are not queued meanwhile. */
    boolean isOpen() {
        return connection.isOpen();
    }

    /** The connection's asynchronous API, for a command whose future its caller waits for (or not) itself. */
    RedisAsyncCommands<String, String> async() {
        return connection.async();
    }

    /** Closes the command connection. */
    void close() {
        connection.close();
    }

    <T> T run(Scripts.Script script, ScriptOutputType type, String what, String[] keys, String... args) {
        if (!connection.isOpen()) {
            // never queued to be replayed after a reconnect, when nobody waits for its outcome any more
            throw new LockBackendException(description, what + " was not sent: the connection to Redis is down"
                    + " (reconnecting) and lock commands are not queued while disconnected", null);
        }
        try {
            return await(connection.async().evalsha(script.sha(), type, keys, args), what);
        } catch (RedisNoScriptException e) {
            // a restart, a failover or SCRIPT FLUSH emptied the script cache: EVAL runs and caches it again
            return await(connection.async().<T>eval(script.body(), type, keys, args), what);
        }
    }

    /**
     * Waits for a command, at most the command timeout, without being interrupted: an interrupt cannot take back
     * a script already sent, so the caller waits for its outcome (a few ms) and the core then sees the interrupt
     * flag, set again here, between its steps (and withdraws, or ends the wait, as for any interruption).
     */
    <T> T await(RedisFuture<T> future, String what) {
        long deadline = System.nanoTime() + commandTimeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    future.cancel(false);
                    throw new RedisCommandTimeoutException(what + " timed out after " + commandTimeout.toMillis()
                            + " ms");
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RedisException re) {
                        throw re;
                    }
                    throw new RedisException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    LockBackendException failed(String what, RedisException e) {
        return new LockBackendException(description, what + " failed: " + e.getMessage(), e);
    }
}
