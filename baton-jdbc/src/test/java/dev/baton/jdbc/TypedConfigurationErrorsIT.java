package dev.baton.jdbc;

import dev.baton.LockClientClosedException;
import dev.baton.LockException;
import dev.baton.MissingSchemaException;
import dev.baton.UnsupportedBackendException;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.jdbc.fixtures.TxDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The configuration errors (issue 10 §6) whose type no other test asserts: each is a {@link LockException}
 * subtype, with its message as before, on the real database.
 */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
class TypedConfigurationErrorsIT {
    private final String table = "baton_typed_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE,
            36);

    private static PGSimpleDataSource postgres() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(PostgresFixture.ADMIN_URL);
        return ds;
    }

    @AfterEach
    void dropTables() throws Exception {
        try (Connection c = DriverManager.getConnection(PostgresFixture.ADMIN_URL); Statement st = c.createStatement()) {
            for (String suffix : new String[] {"_rowlocks", "_versions", "_names", "_rw", "_queue", ""}) {
                st.execute("DROP TABLE IF EXISTS " + table + suffix);
            }
            st.execute("DROP SEQUENCE IF EXISTS " + table + "_token_seq");
        }
    }

    @Test
    void theSessionStrategyOnSqliteIsAnUnsupportedBackend() {
        try (TxDatabase sqlite = TxDatabase.sqlite()) {
            assertThatThrownBy(() -> JdbcLocks.builder(sqlite.raw("")).tableName(table).createTableIfMissing()
                    .strategy(Strategy.SESSION).build())
                    .isInstanceOf(UnsupportedBackendException.class)
                    .hasMessage("the session strategy needs PostgreSQL, MariaDB or MySQL; SQLite has no session locks"
                            + " (use Strategy.LEASE)");
        }
    }

    @Test
    void aMissingStrategyTableIsMissingSchema() {
        // the lease tables exist; the row-lock and version tables are created only on first use, if allowed
        JdbcLocks.builder(postgres()).tableName(table).createTableIfMissing().build().close();
        try (JdbcLockClient locks = JdbcLocks.builder(postgres()).tableName(table).build()) {
            assertThatThrownBy(() -> locks.inTransaction("typed", Duration.ZERO, (c, lease) -> null))
                    .isInstanceOf(MissingSchemaException.class)
                    .hasMessageContaining("table '" + table + "_rowlocks' is missing on")
                    .hasMessageContaining("/dev/baton/jdbc/schema/postgresql-rowlocks.sql");
            assertThatThrownBy(() -> locks.optimistic("typed").version())
                    .isInstanceOf(MissingSchemaException.class)
                    .hasMessageContaining("table '" + table + "_versions' is missing on");
        }
    }

    @Test
    void everyPerCallStrategyOfAClosedClientSaysClosed() {
        JdbcLockClient locks = JdbcLocks.builder(postgres()).tableName(table).createTableIfMissing().build();
        locks.close();
        assertThatThrownBy(() -> locks.optimistic("typed"))
                .isInstanceOf(LockClientClosedException.class).hasMessageContaining("is closed");
        assertThatThrownBy(() -> locks.runOnce("typed", Duration.ofSeconds(1), Duration.ofMillis(1), () -> { }))
                .isInstanceOf(LockClientClosedException.class).hasMessageContaining("is closed");
    }
}
