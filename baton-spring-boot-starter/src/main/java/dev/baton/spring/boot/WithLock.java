package dev.baton.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The method runs only while this process holds the named lock of the application's
 * {@link dev.baton.LockClient}; the lock is released when the method returns or throws. Inside the method,
 * {@link CurrentLease#get()} is the lease, whose {@link dev.baton.Lease#fencingToken() fencing token} the method
 * passes to the resource it writes.
 *
 * <pre>{@code
 * @WithLock(value = "order-#{#order.id}", maxWait = "5s")
 * public void ship(Order order) {
 *     orders.markShipped(order.id(), CurrentLease.get().fencingToken());
 * }
 *
 * @Scheduled(fixedRate = 60_000)
 * @WithLock(value = "nightly-report", onBusy = WithLock.OnBusy.SKIP)
 * public void report() { ... }    // one instance runs it per tick; the others skip
 * }</pre>
 *
 * <p>The method must finish its work before it returns: one returning a {@code CompletionStage}, {@code Future} or
 * reactive type ({@code Mono}, {@code Flux}, any Reactive Streams {@code Publisher}, ...) is refused with an
 * {@link IllegalStateException} when called. A release that fails after the method returned is logged at WARN and
 * the method's result returned (the lock ends on the server within its lease time); after the method threw, it is
 * added to the method's exception as suppressed. The application's one {@link dev.baton.LockClient} bean (or its
 * {@code @Primary} one) is used, also when {@code baton.enabled=false}; with none, the call fails.
 *
 * <p>Works on public methods of Spring beans called through their proxy (not on a call from the same object), like
 * {@code @Transactional}. Baton renews a held lease in the background, so a long method keeps its lock, and a
 * holder that dies frees it within one lease time: the client's ({@code baton.lease-time}), or the method's own
 * {@link #leaseTime()}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface WithLock {
    /**
     * The lock name: literal text with {@code #{...}} SpEL expressions over the method's arguments (by name, or
     * {@code #p0}, {@code #a0}), {@code #root.method}, {@code #root.target} and beans ({@code @beanName}). For
     * example {@code "order-#{#order.id}"}.
     */
    String value();

    /**
     * How long to wait for the lock: {@code 500ms}, {@code 10s}, {@code 2m} or ISO-8601 ({@code PT10S});
     * {@code 0} tries once. Empty (the default): {@code baton.default-wait} (default 0).
     */
    String maxWait() default "";

    /**
     * The lease time of this method's locks: {@code 500ms}, {@code 30s}, {@code 2m} or ISO-8601 ({@code PT30S}),
     * from 100 ms to 7 days. Empty (the default): the client's ({@code baton.lease-time}).
     *
     * <p>A client renews all its leases in one batch with one lease time, so the starter serves each other lease time
     * with a client of its own, built over the same backend (same {@code DataSource} and table, same Redis and key
     * prefix) and closed with the application context: its locks are the same locks, excluding every other client's
     * holds, with fencing tokens from the same counter. It renews every third of its lease time (or every
     * {@code baton.renew-interval}, if shorter).
     *
     * <p>Refused with an {@link IllegalStateException} naming the method, at start-up for the methods of the
     * context's singletons (which also builds the lease time's client), else when first called, before any lock is
     * taken: a value that is not a duration or is out of those bounds; a backend whose locks have no lease time
     * (ZooKeeper, where a lock lives as long as the client's session, and the JDBC session strategy); and a
     * {@link dev.baton.LockClient} bean that the application built itself, since the starter cannot build another
     * like it. The method never runs under another lease time than the one it names.
     */
    String leaseTime() default "";

    /** What happens when the lock stays busy for the whole wait. */
    OnBusy onBusy() default OnBusy.THROW;

    /** What a {@link WithLock} method does when its lock stays busy. */
    enum OnBusy {
        /** Throw {@link dev.baton.LockTimeoutException}: the method does not run. */
        THROW,
        /**
         * Skip the method and return {@code null} (or {@code Optional.empty()}, or 0/false for a primitive): for
         * scheduled jobs that one instance runs per tick.
         */
        SKIP
    }
}
