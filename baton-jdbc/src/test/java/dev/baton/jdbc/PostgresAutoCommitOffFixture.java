package dev.baton.jdbc;

import com.zaxxer.hikari.HikariConfig;

/**
 * The {@link PostgresFixture} through pools whose connections default to {@code autoCommit=false} (common with
 * Spring and HikariCP settings): every write Baton makes must commit by itself, or the pool rolls it back
 * when the connection returns.
 */
public class PostgresAutoCommitOffFixture extends PostgresFixture {
    @Override
    public String name() {
        return super.name() + "-autocommit-off";
    }

    @Override
    String table() {
        return "baton_contract_ac0";
    }

    @Override
    void configure(HikariConfig pool) {
        pool.setAutoCommit(false);
    }
}
