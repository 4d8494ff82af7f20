package dev.baton.jdbc;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;

/**
 * A data source over a real one that records the SQL text of every statement its connections prepare or
 * execute, so a test can tell what a client sent (for example, that it never sent {@code LISTEN}), and, asked, what
 * it read back of some of them ({@link #recordAnswers}).
 */
final class SqlRecordingDataSource implements DataSource {
    private final DataSource raw;
    private final List<String> sql = new CopyOnWriteArrayList<>();

    SqlRecordingDataSource(DataSource raw) {
        this.raw = raw;
    }

    private volatile String hookFragment;
    private volatile Runnable hook;

    /**
     * Runs {@code action} once, on the calling thread, just before the first statement from now on whose SQL text
     * contains {@code fragment} is prepared or executed: a way to put another client's step exactly between two
     * statements of this one.
     */
    void before(String fragment, Runnable action) {
        hookFragment = fragment;
        hook = action;
    }

    private void runHook(String sqlText) {
        String fragment = hookFragment;
        Runnable action = hook;
        if (fragment != null && action != null && sqlText.contains(fragment)) {
            synchronized (this) {
                if (hook != action) {
                    return;
                }
                hook = null;
            }
            action.run();
        }
    }

    private volatile String answersFragment;
    private final List<Integer> answers = new CopyOnWriteArrayList<>();

    /**
     * From now on, records what the client reads as an {@code int} from the first column of the results of every
     * statement whose SQL text contains {@code fragment} and that is prepared from now on (see {@link #answers()}).
     */
    void recordAnswers(String fragment) {
        answersFragment = fragment;
    }

    /** What {@link #recordAnswers} recorded, in order: the first column of each row the client read, as an int. */
    List<Integer> answers() {
        return List.copyOf(answers);
    }

    /**
     * Every SQL text sent so far, in order, but the heartbeat's of the client's places in line (sent every 200 ms by
     * a thread of its own while the client has waiters, whatever its acquisitions do): see {@link #isHeartbeat}.
     */
    List<String> sql() {
        return sql.stream().filter(s -> !isHeartbeat(s)).toList();
    }

    /** As {@link #sql()}, from index {@code from} on (one reading of the statements). */
    List<String> sqlFrom(int from) {
        List<String> all = sql();
        return all.subList(from, all.size());
    }

    /** Every SQL text sent so far, in order, the heartbeat's included. */
    List<String> allSql() {
        return List.copyOf(sql);
    }

    /** A statement of the lease line's heartbeat: a refresh of places, or the deletion of dead tickets. */
    static boolean isHeartbeat(String s) {
        return s.startsWith("WITH f AS (UPDATE ") || s.matches("(?s)UPDATE \\w+_queue SET expires_at .*")
                || s.matches("(?s)SELECT name, owner FROM \\w+_queue WHERE .*")
                || s.matches("(?s)DELETE FROM \\w+_queue (USING|WHERE expires_at <=).*");
    }

    private Object recording(Object target, Class<?> type) {
        InvocationHandler h = (p, method, args) -> {
            if (args != null && args.length > 0 && args[0] instanceof String s
                    && (method.getName().startsWith("prepare") || method.getName().startsWith("execute")
                    || method.getName().equals("addBatch"))) {
                sql.add(s);
                runHook(s);
            }
            Object result;
            try {
                result = method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (method.getName().equals("createStatement") && result != null) {
                return recording(result, Statement.class);
            }
            String fragment = answersFragment;
            if (method.getName().equals("prepareStatement") && result != null && fragment != null
                    && ((String) args[0]).contains(fragment)) {
                return answering(result, PreparedStatement.class);
            }
            return result;
        };
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h);
    }

    /** {@code target}, a statement or a result set, recording what the client reads of column 1 as an int. */
    private Object answering(Object target, Class<?> type) {
        InvocationHandler h = (p, method, args) -> {
            Object result;
            try {
                result = method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (method.getName().equals("executeQuery") && result != null) {
                return answering(result, ResultSet.class);
            }
            if (method.getName().equals("getInt") && args.length == 1 && Integer.valueOf(1).equals(args[0])) {
                answers.add((Integer) result);
            }
            return result;
        };
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h);
    }

    @Override
    public Connection getConnection() throws SQLException {
        return (Connection) recording(raw.getConnection(), Connection.class);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return (Connection) recording(raw.getConnection(username, password), Connection.class);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return raw.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        raw.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        raw.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return raw.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return raw.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return raw.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return raw.isWrapperFor(iface);
    }
}
