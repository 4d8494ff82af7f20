package dev.baton.examples.stock;

import dev.baton.spring.boot.CurrentLease;
import dev.baton.spring.boot.WithLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A job that must run once per tick, whichever instance runs it. Every instance's scheduler fires it; the one that
 * gets the lock checks whether this tick was done and, if not, does it; the others skip ({@code OnBusy.SKIP}).
 */
@Component
public class TickJob {
    private final JdbcClient db;
    private final long tickMillis;
    private final String instance;

    public TickJob(JdbcClient db, @Value("${stock.tick-millis:1000}") long tickMillis,
                   @Value("${stock.instance:${random.uuid}}") String instance) {
        this.db = db;
        this.tickMillis = tickMillis;
        this.instance = instance;
    }

    @Scheduled(fixedRateString = "${stock.tick-millis:1000}")
    @WithLock(value = "tick-job", onBusy = WithLock.OnBusy.SKIP)
    public void run() {
        long tick = System.currentTimeMillis() / tickMillis;
        // check, then act: safe because no other instance runs this between the two statements
        boolean done = db.sql("SELECT count(*) FROM baton_example_ticks WHERE tick = ?").param(tick)
                .query(Long.class).single() > 0;
        if (!done) {
            db.sql("INSERT INTO baton_example_ticks (tick, instance, fence) VALUES (?, ?, ?)")
                    .params(tick, instance, CurrentLease.get().fencingToken()).update();
        }
    }
}
