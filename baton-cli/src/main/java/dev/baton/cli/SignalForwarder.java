package dev.baton.cli;

import sun.misc.Signal;
import sun.misc.SignalHandler;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;

/**
 * Passes SIGINT, SIGTERM and SIGHUP received by {@code baton run} on to the command's process group, once
 * each, so the command decides how to stop and {@code baton} still releases the lock after the group has
 * ended. The first one passed on is also a stop request ({@link #stopRequested()}): {@code baton run} gives
 * the group {@code --grace} to end, then kills it. SIGHUP (terminal closed, ssh connection dropped) is
 * treated like SIGTERM.
 *
 * <p>Before the command starts (while waiting for the lock) a signal interrupts the waiting thread and is
 * remembered; {@link #pendingExitCode()} then gives 128 + its number. If the command starts anyway, the
 * remembered signal is passed to it at once.
 *
 * <p>A signal that was ignored when {@code baton} started (nohup, a background job of a non-interactive
 * shell) stays ignored, by {@code baton} and by the command, as for any program: the JVM then does not let
 * us install a handler. SIGQUIT belongs to the JVM (thread dumps, which the launcher's
 * {@code -XX:-DisplayVMOutput} keeps out of the command's output) and cannot be handled here.
 *
 * <p>Replaces the JVM's handlers (which would run shutdown hooks and exit) while installed; {@link #close()}
 * puts them back. Thread safety: the handlers run on threads the JVM starts per signal; state is guarded by
 * {@code this}, so signals are passed on one at a time, in the order their handlers ran.
 */
final class SignalForwarder implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SignalForwarder.class);
    private static final List<String> SIGNALS = List.of("INT", "TERM", "HUP");

    private final Thread waiter;
    private final Map<Signal, SignalHandler> previous = new LinkedHashMap<>();
    private CommandGroup group;
    private Signal pending;
    /** Completed with the first signal passed on to the command's group. */
    private final CompletableFuture<Stop> stop = new CompletableFuture<>();

    /**
     * A stop request: a signal passed on to the command's group.
     *
     * @param name     the signal's name, such as {@code SIGTERM}
     * @param exitCode 128 + its number, the status of a shell that signal ended
     */
    record Stop(String name, int exitCode) {
    }

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
        if (group != null) {
            forward(group, signal);
        } else {
            if (pending == null) {
                pending = signal;
            }
            waiter.interrupt();
        }
    }

    /** From now on signals go to {@code commandGroup}; one received while waiting is passed on now. */
    synchronized void attach(CommandGroup commandGroup) {
        group = commandGroup;
        if (pending != null) {
            forward(commandGroup, pending);
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

    /** Completes when the first signal has been passed on to the command's group. */
    CompletableFuture<Stop> stopRequested() {
        return stop;
    }

    private void forward(CommandGroup group, Signal signal) {
        group.signal(signal.getName());
        stop.complete(new Stop("SIG" + signal.getName(), 128 + signal.getNumber()));
        log.debug("passed SIG{} on to the command's process group (supervisor pid {})", signal.getName(),
                group.process().pid());
    }

    @Override
    public synchronized void close() {
        previous.forEach(Signal::handle);
        previous.clear();
    }
}
