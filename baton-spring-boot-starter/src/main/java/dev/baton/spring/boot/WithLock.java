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
 * {@code @Transactional}. The lease time is the client's ({@code baton.lease-time}): Baton renews a held lease in
 * the background, so a long method keeps its lock, and a holder that dies frees it within one lease time.
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
