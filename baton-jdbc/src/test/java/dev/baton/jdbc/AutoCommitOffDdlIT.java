package dev.baton.jdbc;

import dev.baton.jdbc.fixtures.TxDatabase;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code createTableIfMissing()} on pools whose connections default to {@code autoCommit=false}: every object
 * it creates — the lease tables, the session strategy's name registry, the row-lock and version tables — must
 * be committed, so that a client built without {@code createTableIfMissing()} finds them.
 */
@ResourceLock(TxDatabase.SQLITE_LOCK) // on the shared SQLite file (see TxDatabase.SQLITE_LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AutoCommitOffDdlIT {
    private static final String TABLE = "baton_ac0_ddl";
    private final List<TxDatabase> dbs = new ArrayList<>();

    List<TxDatabase> databases() {
        if (dbs.isEmpty()) {
            dbs.addAll(TxDatabase.autoCommitOff());
        }
        return dbs;
    }

    @AfterAll
    void close() {
        dbs.forEach(TxDatabase::close);
    }

    /**
     * Regression: on PostgreSQL the session strategy's {@code <table>_names} was created after the lease DDL had
     * put auto-commit back off, so the pool rolled it back and the next client found it missing.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void everyObjectCreateTableIfMissingMadeIsThereForTheNextClient(TxDatabase db) {
        db.exec("DROP TABLE IF EXISTS " + TABLE + ", " + TABLE + "_rw, " + TABLE + "_queue, " + TABLE + "_released, " + TABLE + "_names, "
                + TABLE + "_rowlocks, " + TABLE + "_versions", "DROP SEQUENCE IF EXISTS " + TABLE + "_token_seq");
        var pool = db.pool(3);
        try (JdbcLockClient session = JdbcLocks.builder(pool).tableName(TABLE).strategy(Strategy.SESSION)
                .createTableIfMissing().build()) {
            session.inTransaction("ddl", Duration.ofSeconds(5), (c, lease) -> null);
            session.optimistic("ddl").update(1, (c, version) -> null);
        }
        // built without createTableIfMissing(): each refuses at once if an object is missing
        try (JdbcLockClient lease = JdbcLocks.builder(pool).tableName(TABLE).build();
             JdbcLockClient session = JdbcLocks.builder(pool).tableName(TABLE).strategy(Strategy.SESSION).build()) {
            long token = lease.inTransaction("ddl", Duration.ofSeconds(5), (c, l) -> l.fencingToken());
            assertThat(token).isPositive();
            assertThat(lease.optimistic("ddl").version()).isEqualTo(2);
            assertThat(session.lock("ddl").tryAcquire()).isPresent().get().satisfies(l -> l.close());
        }
    }
}
