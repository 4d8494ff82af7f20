package dev.baton.bench;

import com.zaxxer.hikari.HikariDataSource;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * A pool wrapper that counts the statements sent through it ({@code execute*} calls), in total and those
 * sent from Baton's renewal thread, so the benchmark can state statements per grant and per renewal
 * interval without server-side statement statistics (pg_stat_statements is not installed here).
 */
final class CountingDataSource implements DataSource, AutoCloseable {
    private final HikariDataSource pool;
    final LongAdder statements = new LongAdder();
    final LongAdder renewalStatements = new LongAdder();

    CountingDataSource(HikariDataSource pool) {
        this.pool = pool;
    }

    private void count() {
        statements.increment();
        if (Thread.currentThread().getName().startsWith("baton-renewer")) {
            renewalStatements.increment();
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        return wrap(pool.getConnection());
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        return wrap(pool.getConnection(user, password));
    }

    private Connection wrap(Connection real) {
        InvocationHandler h = (proxy, m, args) -> {
            Object r = invoke(real, m, args);
            if (r instanceof CallableStatement cs) {
                return statement(cs, CallableStatement.class);
            }
            if (r instanceof PreparedStatement ps) {
                return statement(ps, PreparedStatement.class);
            }
            if (r instanceof Statement s) {
                return statement(s, Statement.class);
            }
            return r;
        };
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{Connection.class}, h);
    }

    private <S extends Statement> Object statement(S real, Class<S> type) {
        InvocationHandler h = (proxy, m, args) -> {
            if (m.getName().startsWith("execute")) {
                count();
            }
            return invoke(real, m, args);
        };
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{type}, h);
    }

    private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return pool.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        pool.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        pool.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return pool.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return pool.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return pool.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return pool.isWrapperFor(iface);
    }

    @Override
    public void close() {
        pool.close();
    }
}
