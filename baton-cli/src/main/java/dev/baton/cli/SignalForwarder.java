package dev.baton.cli;

import sun.misc.Signal;
import sun.misc.SignalHandler;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * Passes SIGINT and SIGTERM received by {@code baton run} on to the command it runs, so the command decides
 * how to stop and {@code baton} still releases the lock and exits with the command's status.
 *
 * <p>Before the command starts (while waiting for the lock) a signal interrupts the waiting thread and is
 * remembered; {@link #pendingExitCode()} then gives 128 + its number. If the command starts anyway, the
 * remembered signal is passed to it at once.
 *
 * <p>Replaces the JVM's handlers (which would run shutdown hooks and exit) while installed; {@link #close()}
 * puts them back. Thread safety: the handlers run on the JVM's signal thread; state is guarded by
 * {@code this}.
 */
final class SignalForwarder implements AutoCloseable {
    private static final List<String> SIGNALS = List.of("INT", "TERM");

    private final Thread waiter;
    private final Map<Signal, SignalHandler> previous = new LinkedHashMap<>();
    private Process child;
    private Signal pending;

    private SignalForwarder(Thread waiter) {
        this.waiter = waiter;
    }

    /** Installs the handlers; signals received before {@link #attach} interrupt {@code waiter}. */
    static SignalForwarder install(Thread waiter) {
        SignalForwarder forwarder = new SignalForwarder(waiter);
        for (String name : SIGNALS) {
            Signal signal = new Signal(name);
            try {
                forwarder.previous.put(signal, Signal.handle(signal, forwarder::handle));
            } catch (IllegalArgumentException e) {
                // The JVM reserves this signal (for example under -Xrs); leave its default behaviour.
            }
        }
        return forwarder;
    }

    private synchronized void handle(Signal signal) {
        if (child != null) {
            forward(child, signal);
        } else {
            if (pending == null) {
                pending = signal;
            }
            waiter.interrupt();
        }
    }

    /** From now on signals go to {@code process}; one received while waiting is passed on now. */
    synchronized void attach(Process process) {
        child = process;
        if (pending != null) {
            forward(process, pending);
        }
    }

    /** 128 + the number of a signal received before the command started, if one was. */
    synchronized OptionalInt pendingExitCode() {
        return pending == null ? OptionalInt.empty() : OptionalInt.of(128 + pending.getNumber());
    }

    /** The name (such as {@code SIGTERM}) of a signal received before the command started, or null. */
    synchronized String pendingName() {
        return pending == null ? null : "SIG" + pending.getName();
    }

    private static void forward(Process process, Signal signal) {
        if (!process.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal.getName(), Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0) {
                return;
            }
        } catch (IOException e) {
            // No kill(1): fall through.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (signal.getName().equals("TERM")) {
            process.destroy();
        }
    }

    @Override
    public synchronized void close() {
        previous.forEach(Signal::handle);
        previous.clear();
    }
}
