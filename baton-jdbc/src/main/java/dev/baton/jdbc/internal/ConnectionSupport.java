package dev.baton.jdbc.internal;

import dev.baton.spi.Causes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;

/**
 * What the transaction strategies share about connections: classifying driver errors, throwing away a
 * connection that must not be reused, and the guarded view of a connection handed to user work.
 */
public final class ConnectionSupport {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionSupport.class);
    /** SQLite's primary result code for "database is locked" (the busy timeout ran out, or a stale snapshot). */
    public static final int SQLITE_BUSY = 5;
    private static final Set<String> REFUSED = Set.of("commit", "setAutoCommit", "close", "abort",
            "setTransactionIsolation", "setReadOnly", "setNetworkTimeout");

    private ConnectionSupport() {
    }

    /** Work on a borrowed connection. */
    @FunctionalInterface
    public interface SqlCall<T> {
        T call(Connection c) throws SQLException;
    }

    /**
     * The one way Baton runs statements that must persist outside a transaction of its own: borrows a
     * connection, runs {@code call} with auto-commit <b>on</b> whatever the pool's default (so every statement
     * commits; a pool defaulting to {@code autoCommit=false} would otherwise roll the writes back when the
     * connection returns), and puts the setting back before the connection goes back. A call may still open
     * its own transaction ({@code setAutoCommit(false)} … {@code commit()}); it must restore auto-commit.
     * On PostgreSQL ({@code traits}) statements are one-shot (no named server-side prepared statements), so
     * the call works through a pooler in transaction mode.
     * The paths that hold one transaction across user work (row lock, optimistic) commit it themselves.
     */
    public static <T> T autoCommitted(DataSource dataSource, DialectTraits traits, SqlCall<T> call)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return autoCommitted(c, traits, call);
        }
    }

    /** As {@link #autoCommitted(DataSource, DialectTraits, SqlCall)} on a connection the caller already has. */
    public static <T> T autoCommitted(Connection c, DialectTraits traits, SqlCall<T> call) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        if (!autoCommit) {
            c.setAutoCommit(true);
        }
        int threshold = traits.oneShotStatements(c);
        try {
            return call.call(c);
        } finally {
            traits.restoreStatements(c, threshold);
            if (!autoCommit) {
                c.setAutoCommit(false);
            }
        }
    }

    /**
     * Whether a connection that threw this may be out of step with its server or dead: a socket or query
     * timeout, a connection-class SQL state (08xxx), or a cancelled statement (PostgreSQL 57014, MySQL 1317,
     * MariaDB 70100). Such a connection is closed and evicted, never given back to the pool for reuse.
     */
    public static boolean isBroken(SQLException e) {
        for (Throwable t : Causes.chain(e)) {
            if (t instanceof SQLTimeoutException || t instanceof SQLNonTransientConnectionException
                    || t instanceof SQLTransientConnectionException || t instanceof SQLRecoverableException
                    || t instanceof SocketTimeoutException || t instanceof SocketException) {
                return true;
            }
            if (t instanceof SQLException s) {
                String state = s.getSQLState();
                if (state != null && (state.startsWith("08") || state.equals("57014") || state.equals("70100")
                        || state.equals("57P01"))) {
                    return true;
                }
                if (s.getErrorCode() == 1317) { // MySQL/MariaDB: query execution was interrupted
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether the server session behind the connection is gone — the connection broke (08xxx), the server
     * ended the session (PostgreSQL 57Pxx), or it was killed (MariaDB 70100 / 1927) — as opposed to a
     * timeout or a failed statement on a live session. Narrower than {@link #isBroken}.
     */
    public static boolean isGone(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        return state.startsWith("08") || state.startsWith("57P") || state.equals("70100") || e.getErrorCode() == 1927;
    }

    /**
     * The maximum size of a HikariCP pool ({@code getMaximumPoolSize}, found without a compile-time dependency, as
     * {@link #discard} finds {@code evictConnection}), or empty for any other data source.
     */
    public static java.util.OptionalInt maximumPoolSize(DataSource dataSource) {
        try {
            Object v = dataSource.getClass().getMethod("getMaximumPoolSize").invoke(dataSource);
            return v instanceof Integer i ? java.util.OptionalInt.of(i) : java.util.OptionalInt.empty();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return java.util.OptionalInt.empty();
        }
    }

    /**
     * Closes a connection so that its physical connection is never handed out again. HikariCP (found by its
     * public {@code evictConnection(Connection)}, without a compile-time dependency) evicts it at once; any
     * other pool gets {@link Connection#abort}, which closes the physical connection so the pool's validation
     * discards it.
     */
    public static void discard(DataSource dataSource, Connection c, String why) {
        LOG.debug("discarding a connection: {}", why);
        boolean evicted = false;
        try {
            Method evict = dataSource.getClass().getMethod("evictConnection", Connection.class);
            evict.invoke(dataSource, c);
            evicted = true;
        } catch (NoSuchMethodException e) {
            // not HikariCP
        } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
            LOG.debug("evictConnection failed; aborting the connection instead", e);
        }
        if (!evicted) {
            try {
                c.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                LOG.debug("abort of a broken connection failed", e);
            }
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("close of a discarded connection failed", e);
        }
    }

    /** A view of a connection for user work; see {@link Guarded}. */
    public static Guarded guard(Connection c, String owner) {
        return new Guarded(c, owner);
    }

    /**
     * A connection view that refuses to end or reconfigure the transaction it belongs to (commit, rollback,
     * auto-commit, isolation, close, abort), reports auto-commit off (SQLite's transaction is begun by SQL,
     * behind the driver's back), and refuses every call once {@link #end()} was called, so work cannot keep
     * using a connection after it went back to the pool. Savepoints and {@code rollback(Savepoint)} pass.
     *
     * <p>The real connection never escapes: statements, prepared and callable statements, result sets and the
     * database metadata it hands out are views too, whose {@code getConnection()} (and a result set's
     * {@code getStatement()}) return views; {@code unwrap} returns the view itself for the interfaces it
     * implements ({@code Connection}, {@code Statement}, …) and refuses any other (a driver class such as
     * {@code PGConnection} is the real connection, which could commit and end the lock while the lease still
     * reads valid). An SQL {@code COMMIT} or {@code ROLLBACK} statement executed by the work cannot be told
     * apart from other SQL: it ends the transaction, and the lock, early; docs/ROW-LOCK.md says so.
     */
    public static final class Guarded implements InvocationHandler {
        private static final Set<Class<?>> WRAPPED = Set.of(Statement.class, PreparedStatement.class,
                CallableStatement.class, ResultSet.class, DatabaseMetaData.class);
        private final Connection target;
        private final String owner;
        private final Connection proxy;
        private volatile boolean ended;

        private Guarded(Connection target, String owner) {
            this.target = target;
            this.owner = owner;
            this.proxy = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, this);
        }

        public Connection connection() {
            return proxy;
        }

        public void end() {
            ended = true;
        }

        private SQLException endedError() {
            return new SQLException("the transaction of " + owner + " has ended; this connection is no longer"
                    + " usable by the work", "08003");
        }

        private SQLException unwrapRefused(Class<?> iface, String of) {
            return new SQLException("unwrap(" + (iface == null ? null : iface.getName()) + ") is not allowed on the "
                    + of + " of " + owner + ": the driver's own object reaches the real connection, whose commit or"
                    + " rollback would end the lock while its lease still reads valid");
        }

        @Override
        public Object invoke(Object p, Method method, Object[] args) throws Throwable {
            String name = method.getName();
            if (method.getDeclaringClass() == Object.class) {
                return switch (name) {
                    case "equals" -> p == args[0];
                    case "hashCode" -> System.identityHashCode(p);
                    default -> "Connection[" + owner + (ended ? ", ended" : "") + "]";
                };
            }
            if (name.equals("isClosed")) {
                return ended || target.isClosed();
            }
            if (ended) {
                throw endedError();
            }
            if (REFUSED.contains(name) || (name.equals("rollback") && (args == null || args.length == 0))) {
                throw new SQLException(name + "() is not allowed on the connection of " + owner + ": the"
                        + " transaction ends when the work returns (commit) or throws (rollback)");
            }
            switch (name) {
                case "getAutoCommit" -> {
                    return false;
                }
                case "unwrap" -> {
                    Class<?> iface = (Class<?>) args[0];
                    if (iface != null && iface.isInstance(p)) {
                        return p;
                    }
                    throw unwrapRefused(iface, "connection");
                }
                case "isWrapperFor" -> {
                    return args[0] != null && ((Class<?>) args[0]).isInstance(p);
                }
                default -> {
                }
            }
            return wrap(call(target, method, args), method.getReturnType(), p);
        }

        private static Object call(Object target, Method method, Object[] args) throws Throwable {
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }

        /** A view of a statement, result set or metadata object that {@code parent} (a view) handed out. */
        private Object wrap(Object result, Class<?> type, Object parent) {
            if (result == null || !WRAPPED.contains(type)) {
                return result;
            }
            return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {type},
                    new Child(result, type, parent));
        }

        /** The handler of a statement, result set or metadata view. */
        private final class Child implements InvocationHandler {
            private final Object target;
            private final Class<?> type;
            private final Object parent;

            Child(Object target, Class<?> type, Object parent) {
                this.target = target;
                this.type = type;
                this.parent = parent;
            }

            @Override
            public Object invoke(Object p, Method method, Object[] args) throws Throwable {
                String name = method.getName();
                if (method.getDeclaringClass() == Object.class) {
                    return switch (name) {
                        case "equals" -> p == args[0];
                        case "hashCode" -> System.identityHashCode(p);
                        default -> type.getSimpleName() + "[" + owner + "]";
                    };
                }
                switch (name) {
                    case "getConnection" -> {
                        return proxy;
                    }
                    case "getStatement" -> {
                        Object real = call(target, method, args);
                        if (parent instanceof Statement && Proxy.getInvocationHandler(parent) instanceof Child c
                                && c.target == real) {
                            return parent;
                        }
                        return wrap(real, Statement.class, p);
                    }
                    case "unwrap" -> {
                        Class<?> iface = (Class<?>) args[0];
                        if (iface != null && iface.isInstance(p)) {
                            return p;
                        }
                        throw unwrapRefused(iface, type.getSimpleName());
                    }
                    case "isWrapperFor" -> {
                        return args[0] != null && ((Class<?>) args[0]).isInstance(p);
                    }
                    case "close", "isClosed" -> {
                        return call(target, method, args);
                    }
                    default -> {
                    }
                }
                if (ended) {
                    throw endedError();
                }
                return wrap(call(target, method, args), method.getReturnType(), p);
            }
        }
    }
}
