package dev.baton.spring.boot;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockTimeoutException;
import dev.baton.spi.AbstractClientBuilder;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Runs a {@link WithLock} method under its lock:
 * <ol>
 *   <li>evaluate the name (its template parsed once per method) over the call's arguments;</li>
 *   <li>acquire the lock, waiting as the annotation says; busy at the end: throw, or skip the method;</li>
 *   <li>make the lease {@link CurrentLease}, run the method, then remove it and close the lease.</li>
 * </ol>
 * A release that fails does not change the method's outcome: after a method that returned, it is logged and the
 * result returned (the lease is no longer renewed, so it ends on the server within its lease time; the method's
 * work, perhaps committed, must not look failed to a caller that would repeat it); after a method that threw, it is
 * added to the method's exception as suppressed. A method whose return type stands for work still running when it
 * returns ({@link CompletionStage}, {@link Future}, reactive types) is refused: its lock would be released before
 * that work is done.
 */
final class WithLockInterceptor implements MethodInterceptor {
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();
    private static final TemplateParserContext TEMPLATE = new TemplateParserContext();

    private static final Logger log = LoggerFactory.getLogger(WithLockInterceptor.class);
    /**
     * Types, besides {@link CompletionStage} and {@link Future}, whose values stand for work that goes on after the
     * method returns: matched by name on the return type and its supertypes, so that none need be present.
     */
    private static final Set<String> DEFERRED = Set.of(
            "org.reactivestreams.Publisher", // Reactor's Mono and Flux, RxJava's Flowable, Mutiny's Multi, ...
            "java.util.concurrent.Flow$Publisher",
            "io.reactivex.rxjava3.core.Single", "io.reactivex.rxjava3.core.Maybe",
            "io.reactivex.rxjava3.core.Completable", "io.reactivex.rxjava3.core.Observable",
            "io.smallrye.mutiny.Uni",
            "kotlinx.coroutines.flow.Flow", "kotlinx.coroutines.Deferred");

    private final Function<String, LockClient> client;
    private final LeaseClients leaseClients;
    private final Supplier<Duration> defaultWait;
    private final BeanFactory beanFactory;
    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final Map<Method, Plan> plans = new ConcurrentHashMap<>();

    /** A method's parsed annotation. */
    private record Plan(Expression name, String source, Duration maxWait, Duration leaseTime,
                        WithLock.OnBusy onBusy) {
    }

    /** The client whose leases last a {@link WithLock#leaseTime()}. */
    @FunctionalInterface
    interface LeaseClients {
        /**
         * @param main      the client the method would use without a lease time of its own
         * @param leaseTime the method's lease time
         * @param where     the method, for messages
         * @throws IllegalStateException if no client can give this method's locks that lease time (the message says
         *                               why)
         */
        LockClient forLease(LockClient main, Duration leaseTime, String where);
    }

    /**
     * @param client       the lock client, given the method ({@code @WithLock on Class.method}) to name when there
     *                     is none
     * @param leaseClients the client for a method's own lease time
     */
    WithLockInterceptor(Function<String, LockClient> client, LeaseClients leaseClients,
                        Supplier<Duration> defaultWait, BeanFactory beanFactory) {
        this.client = client;
        this.leaseClients = leaseClients;
        this.defaultWait = defaultWait;
        this.beanFactory = beanFactory;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Method specific = target == null ? method : AopUtils.getMostSpecificMethod(method, target.getClass());
        Plan plan = plans.computeIfAbsent(specific, this::plan);
        String name = lockName(plan, specific, invocation.getArguments(), target);
        Lease lease;
        try {
            LockClient main = client.apply(where(specific));
            LockClient locks = plan.leaseTime == null ? main
                    : leaseClients.forLease(main, plan.leaseTime, where(specific));
            lease = locks.lock(name).acquire(plan.maxWait);
        } catch (LockTimeoutException busy) {
            if (plan.onBusy == WithLock.OnBusy.SKIP) {
                return skipped(method.getReturnType());
            }
            throw busy;
        }
        Object result;
        CurrentLease.push(lease);
        try {
            result = invocation.proceed();
        } catch (Throwable failure) {
            CurrentLease.pop();
            try {
                lease.close();
            } catch (RuntimeException release) {
                failure.addSuppressed(release);
            }
            throw failure;
        }
        CurrentLease.pop();
        try {
            lease.close();
        } catch (RuntimeException release) {
            log.warn("{} returned, but the release of its lock '{}' (token {}) failed; the method's result stands,"
                    + " and the lock ends on the server when its lease time runs out", where(specific), name,
                    lease.fencingToken(), release);
        }
        return result;
    }

    /**
     * The lease time {@code method}'s annotation sets, or null for the client's; the annotation is checked whole (and
     * kept for the calls).
     *
     * @throws IllegalStateException if the annotation cannot be used (the message names the method and why)
     */
    Duration leaseTimeOf(Method method) {
        return plans.computeIfAbsent(method, this::plan).leaseTime;
    }

    static String where(Method method) {
        return "@WithLock on " + method.getDeclaringClass().getName() + "." + method.getName();
    }

    /** The name of the type by which {@code method} returns before its work is done, or null. */
    private static String deferred(Method method) {
        Class<?> type = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(type) || Future.class.isAssignableFrom(type)) {
            return type.getName();
        }
        Class<?>[] parameters = method.getParameterTypes();
        if (parameters.length > 0
                && parameters[parameters.length - 1].getName().equals("kotlin.coroutines.Continuation")) {
            return "a Kotlin suspend function";
        }
        Deque<Class<?>> todo = new ArrayDeque<>(List.of(type));
        while (!todo.isEmpty()) {
            Class<?> t = todo.pop();
            if (DEFERRED.contains(t.getName())) {
                return type.getName();
            }
            if (t.getSuperclass() != null) {
                todo.push(t.getSuperclass());
            }
            todo.addAll(Arrays.asList(t.getInterfaces()));
        }
        return null;
    }

    private Plan plan(Method method) {
        WithLock a = AnnotatedElementUtils.findMergedAnnotation(method, WithLock.class);
        if (a == null) {
            throw new IllegalStateException("@WithLock not found on " + method);
        }
        String where = where(method);
        String deferred = deferred(method);
        if (deferred != null) {
            throw new IllegalStateException(where + " returns " + deferred + ": the method returns before its work is"
                    + " done, so the lock would be released while that work runs; put @WithLock on a method that"
                    + " does the work before returning (and call it from the asynchronous code), or hold a Lease of"
                    + " the LockClient until the work completes");
        }
        if (a.value().isBlank()) {
            throw new IllegalStateException(where + ": the lock name is empty");
        }
        Expression name;
        try {
            name = parser.parseExpression(a.value(), TEMPLATE);
        } catch (RuntimeException e) {
            throw new IllegalStateException(where + ": the lock name '" + a.value() + "' is not a valid template"
                    + " (literal text with #{...} expressions): " + e.getMessage(), e);
        }
        Duration wait = defaultWait.get();
        if (!a.maxWait().isBlank()) {
            try {
                wait = DurationStyle.detectAndParse(a.maxWait().trim());
            } catch (RuntimeException e) {
                throw new IllegalStateException(where + ": maxWait '" + a.maxWait() + "' is not a duration (500ms, 10s,"
                        + " 2m or PT10S)", e);
            }
            if (wait.isNegative()) {
                throw new IllegalStateException(where + ": maxWait must not be negative, was " + a.maxWait());
            }
        }
        return new Plan(name, a.value(), wait, leaseTime(a, where), a.onBusy());
    }

    /** The method's own lease time, or null for the client's. */
    private static Duration leaseTime(WithLock a, String where) {
        String text = a.leaseTime().trim();
        if (text.isEmpty()) {
            return null;
        }
        Duration lease;
        try {
            lease = DurationStyle.detectAndParse(text);
        } catch (RuntimeException e) {
            throw new IllegalStateException(where + ": leaseTime '" + a.leaseTime() + "' is not a duration (500ms,"
                    + " 30s, 2m or PT30S)", e);
        }
        try {
            return AbstractClientBuilder.within("leaseTime", lease, AbstractClientBuilder.MIN_LEASE_TIME,
                    AbstractClientBuilder.MAX_LEASE_TIME,
                    "a holder that vanishes keeps its lock for up to one lease time");
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where + ": " + e.getMessage() + " (leaseTime '" + a.leaseTime() + "')",
                    e);
        }
    }

    private String lockName(Plan plan, Method method, Object[] args, Object target) {
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                new Root(method, target, args), method, args, NAMES);
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        Object value;
        try {
            value = plan.name.getValue(context);
        } catch (RuntimeException e) {
            throw new IllegalStateException(where(method) + ": the lock name '" + plan.source
                    + "' could not be evaluated: " + e.getMessage(), e);
        }
        if (value == null || value.toString().isEmpty()) {
            throw new IllegalStateException(where(method) + ": the lock name '" + plan.source
                    + "' evaluated to an empty name");
        }
        return value.toString();
    }

    private static Object skipped(Class<?> type) {
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (!type.isPrimitive() || type == void.class) {
            return null;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == char.class) {
            return '\0';
        }
        if (type == long.class) {
            return 0L;
        }
        if (type == double.class) {
            return 0d;
        }
        if (type == float.class) {
            return 0f;
        }
        if (type == byte.class) {
            return (byte) 0;
        }
        if (type == short.class) {
            return (short) 0;
        }
        return 0;
    }

    /** {@code #root} of a lock name: the method, the target and the arguments. */
    public record Root(Method method, Object target, Object[] args) {
    }
}
