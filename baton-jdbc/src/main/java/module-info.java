/**
 * Baton's JDBC strategies (PostgreSQL, MariaDB/MySQL, SQLite). Users see {@code dev.baton.jdbc} only: the builder
 * {@code JdbcLocks}, {@code JdbcLockClient}, {@code Strategy}, {@code Dialect} and the transaction-scoped types.
 * Each strategy's algorithm lives in a package of its own ({@code lease}, {@code session}, {@code rowlock},
 * {@code optimistic}, {@code scheduled}, {@code readwrite}) with its per-dialect statement set; none is exported.
 */
module dev.baton.jdbc {
    requires transitive dev.baton.core;
    requires transitive java.sql;
    requires org.slf4j;
    // the PostgreSQL driver is optional (LISTEN/NOTIFY for the lease strategy's waiters); drivers are the user's choice
    requires static org.postgresql.jdbc;

    exports dev.baton.jdbc;
}
