package dev.baton.jdbc;

import dev.baton.testkit.TestServers;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;

/**
 * PostgreSQL through the real PgBouncer in transaction mode ({@code scripts/start-servers.sh}: 127.0.0.1:6432,
 * database {@code test}), with a URL as users write it (no {@code prepareThreshold=0}). Each client's pool
 * reaches PgBouncer through its own {@link dev.baton.faultproxy.FaultProxy}.
 *
 * <p>PgBouncer's server sessions are shared by every client of the pooler, so "killing the client's server
 * sessions" would hit other applications' transactions too: here it closes the client's own connections to
 * PgBouncer under its pool instead (as a pooler or network restart would). Waiters are not woken by
 * {@code NOTIFY}: a client does not {@code LISTEN} through a pooler in transaction mode; it polls.
 */
public class PgBouncerFixture extends PostgresFixture {
    static final int BOUNCER_PORT = 6432;

    public PgBouncerFixture() {
        TestServers.require("PgBouncer (transaction mode, in front of PostgreSQL)", HOST, BOUNCER_PORT);
    }

    @Override
    public String name() {
        return "postgresql-via-pgbouncer";
    }

    @Override
    String table() {
        return "baton_contract_bouncer";
    }

    @Override
    DataSource rawDataSource(int proxyPort) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL("jdbc:postgresql://127.0.0.1:" + proxyPort + "/test?user=postgres&socketTimeout=5&tcpKeepAlive=true"
                + "&connectTimeout=3");
        return ds;
    }

    @Override
    String[] hostAndPort() {
        return new String[] {HOST, Integer.toString(BOUNCER_PORT)};
    }

    /** None: the server sessions behind PgBouncer are not the client's own (see the class doc). */
    @Override
    String sessionIdQuery() {
        return null;
    }

    @Override
    public boolean notifiesWaiters() {
        return false;
    }
}
