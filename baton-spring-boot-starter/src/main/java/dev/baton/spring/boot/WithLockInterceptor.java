package dev.baton.spring.boot;

import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockTimeoutException;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Runs a {@link WithLock} method under its lock:
 * <ol>
 *   <li>evaluate the name (its template parsed once per method) over the call's arguments;</li>
 *   <li>acquire the lock, waiting as the annotation says; busy at the end: throw, or skip the method;</li>
 *   <li>make the lease {@link CurrentLease}, run the method, then remove it and close the lease.</li>
 * </ol>
 */
final class WithLockInterceptor implements MethodInterceptor {
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();
    private static final TemplateParserContext TEMPLATE = new TemplateParserContext();

    private final Supplier<LockClient> client;
    private final Supplier<Duration> defaultWait;
    private final BeanFactory beanFactory;
    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final Map<Method, Plan> plans = new ConcurrentHashMap<>();

    /** A method's parsed annotation. */
    private record Plan(Expression name, String source, Duration maxWait, WithLock.OnBusy onBusy) {
    }

    WithLockInterceptor(Supplier<LockClient> client, Supplier<Duration> defaultWait, BeanFactory beanFactory) {
        this.client = client;
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
            lease = client.get().lock(name).acquire(plan.maxWait);
        } catch (LockTimeoutException busy) {
            if (plan.onBusy == WithLock.OnBusy.SKIP) {
                return skipped(method.getReturnType());
            }
            throw busy;
        }
        try (lease) {
            CurrentLease.push(lease);
            try {
                return invocation.proceed();
            } finally {
                CurrentLease.pop();
            }
        }
    }

    private Plan plan(Method method) {
        WithLock a = AnnotatedElementUtils.findMergedAnnotation(method, WithLock.class);
        if (a == null) {
            throw new IllegalStateException("@WithLock not found on " + method);
        }
        String where = "@WithLock on " + method.getDeclaringClass().getName() + "." + method.getName();
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
        return new Plan(name, a.value(), wait, a.onBusy());
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
            throw new IllegalStateException("@WithLock on " + method.getDeclaringClass().getName() + "."
                    + method.getName() + ": the lock name '" + plan.source + "' could not be evaluated: "
                    + e.getMessage(), e);
        }
        if (value == null || value.toString().isEmpty()) {
            throw new IllegalStateException("@WithLock on " + method.getDeclaringClass().getName() + "."
                    + method.getName() + ": the lock name '" + plan.source + "' evaluated to an empty name");
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
