package dev.baton.examples.stock;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/** The example's two tables, created if missing. */
@Component
public class Schema implements InitializingBean {
    private final JdbcClient db;

    public Schema(JdbcClient db) {
        this.db = db;
    }

    @Override
    public void afterPropertiesSet() {
        db.sql("CREATE TABLE IF NOT EXISTS baton_example_stock (item text PRIMARY KEY, amount int NOT NULL"
                + " CHECK (amount >= 0), fence bigint NOT NULL DEFAULT 0)").update();
        // deliberately no key on tick: the lock, not the database, keeps a tick to one run
        db.sql("CREATE TABLE IF NOT EXISTS baton_example_ticks (tick bigint NOT NULL, instance text NOT NULL,"
                + " fence bigint NOT NULL)").update();
    }
}
